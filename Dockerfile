# syntax=docker/dockerfile:1
# mcpgw container image: static binaries on distroless, running as nonroot (65532). It
# serves examples/docker.yaml (copied to /etc/mcpgw/mcpgw.yaml): 0.0.0.0:8080, API keys,
# state in the volume /var/lib/mcpgw, and the go-sdk conformance everything-server (built
# here, on PATH) as its one upstream. See docs/config.md, "Running in a container".
#
#   docker build -t mcpgw --build-arg VERSION=$(git describe --tags --always --dirty) .
#   KEY=mcpgw_$(openssl rand -hex 32)   # the API key clients send; keep it somewhere safe
#   docker run -d --name mcpgw -p 8080:8080 -v mcpgw-state:/var/lib/mcpgw \
#       -e MCPGW_API_KEY_SHA256=$(printf %s "$KEY" | sha256sum | cut -d' ' -f1) mcpgw
#
# Your own config goes over /etc/mcpgw/mcpgw.yaml (-v $PWD/mcpgw.yaml:/etc/mcpgw/mcpgw.yaml:ro).
# It must listen on 0.0.0.0:8080 to be reachable from outside the container, and on such a
# listener `auth.mode: none` refuses to start (it trusts identity headers; only
# `auth.allow_non_loopback: true` overrides that): use api_key, jwt or oauth.
# state_dir must be writable by uid 65532: /var/lib/mcpgw is, and so is a named volume
# mounted there (it takes the directory's owner); a host directory bind-mounted there must
# be chown'ed to 65532 first.
# The image has no shell, Node or npx: stdio upstreams need their own static binaries
# mounted in, or use streamable_http upstreams.

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
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/mcpgw-bridge ./cmd/mcpgw-bridge && \
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/mcpgw-plugin-sql ./cmd/mcpgw-plugin-sql && \
    go build -trimpath -ldflags="-s -w" -o /out/everything-server github.com/modelcontextprotocol/go-sdk/conformance/everything-server && \
    mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    MCPGW_CONFIG=/etc/mcpgw/mcpgw.yaml
COPY --from=build /out/mcpgw /out/mcpgw-bridge /out/mcpgw-plugin-sql /
COPY --from=build /out/everything-server /usr/local/bin/everything-server
COPY --from=build --chown=65532:65532 /out/state /var/lib/mcpgw
COPY examples/docker.yaml /etc/mcpgw/mcpgw.yaml
USER 65532:65532
WORKDIR /home/nonroot
VOLUME /var/lib/mcpgw
EXPOSE 8080
ENTRYPOINT ["/mcpgw", "serve"]
CMD ["--config", "/etc/mcpgw/mcpgw.yaml"]
