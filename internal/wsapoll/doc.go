// Package wsapoll is the Windows binding of WSAPoll with no wait: which events are pending
// on a socket, for the HTTP/1.1 client's idle check (internal/httpclient) and the bridge's peer check.
package wsapoll
