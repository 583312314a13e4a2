// Package wsapoll is the Windows binding of WSAPoll with no wait: which events are pending
// on a socket, for the HTTP/1.1 client's idle check (internal/h1) and the bridge's peer check.
package wsapoll
