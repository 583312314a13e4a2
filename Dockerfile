# syntax=docker/dockerfile:1
# mcpgw container image: static binaries on distroless, running as nonroot (65532).
#
#   docker build -t mcpgw --build-arg VERSION=$(git describe --always --dirty) .
#   docker run -p 8080:8080 -v $PWD/mcpgw.yaml:/etc/mcpgw/mcpgw.yaml:ro \
#       mcpgw --config /etc/mcpgw/mcpgw.yaml
#
# In a container the config must listen on 0.0.0.0:8080 (not 127.0.0.1) to be reachable,
# and state_dir must be writable by uid 65532 (e.g. /home/nonroot/state or a volume).
# The image has no shell, Node or npx: stdio upstreams need their own binaries mounted in,
# or use streamable_http upstreams.

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/mcpgw ./cmd/mcpgw && \
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/mcpgw-bridge ./cmd/mcpgw-bridge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpgw /out/mcpgw-bridge /
USER 65532:65532
WORKDIR /home/nonroot
EXPOSE 8080
ENTRYPOINT ["/mcpgw", "serve"]
