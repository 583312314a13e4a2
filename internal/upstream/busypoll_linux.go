package upstream

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// busyPollSupported: busy polling was measured on Linux, where yieldCPU is sched_yield.
const busyPollSupported = true

// yieldCPU gives the CPU to any other thread that is ready to run on it.
func yieldCPU() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

// servedHere reports whether the other end of the TCP connection nc is a socket of this
// very process: an upstream that the program embedding the gateway serves itself. Busy
// polling for its answer would hold a P that the answer needs (measured in-process: 52
// µs per call became 125 µs), so such a connection never polls. Only a peer on a local
// address can be here; it is found in /proc/net/tcp{,6} (its local and remote addresses
// are nc's remote and local ones) and its inode looked up among /proc/self/fd.
func servedHere(nc net.Conn) bool {
	la, ok1 := nc.LocalAddr().(*net.TCPAddr)
	ra, ok2 := nc.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 || !(ra.IP.IsLoopback() || ra.IP.Equal(la.IP)) {
		return false
	}
	inode := peerInode(ra, la)
	if inode == "" {
		return false
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && l == want {
			return true
		}
	}
	return false
}

// peerInode is the inode of the TCP socket whose local address is local and remote address
// remote, from /proc/net/tcp6 or tcp ("" when there is none). An IPv4 connection accepted
// by a dual-stack listener (":8080", Go's default) is an IPv6 socket with IPv4-mapped
// addresses, in tcp6; one accepted by an IPv4 listener is in tcp.
func peerInode(local, remote *net.TCPAddr) string {
	if inode := procInode("/proc/net/tcp6", procAddr6(local), procAddr6(remote)); inode != "" {
		return inode
	}
	if local.IP.To4() != nil && remote.IP.To4() != nil {
		return procInode("/proc/net/tcp", procAddr4(local), procAddr4(remote))
	}
	return ""
}

func procInode(file, local, remote string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if len(f) >= 10 && f[1] == local && f[2] == remote {
			return f[9]
		}
	}
	return ""
}

// procAddr4 writes an IPv4 address as /proc/net/tcp does: the address as a
// little-endian 32-bit word in hex, a colon, the port in hex.
func procAddr4(a *net.TCPAddr) string {
	ip := a.IP.To4()
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
}

// procAddr6 is procAddr4 for /proc/net/tcp6: four little-endian 32-bit words (an IPv4
// address in its IPv4-mapped form).
func procAddr6(a *net.TCPAddr) string {
	ip := a.IP.To16()
	var sb strings.Builder
	for w := 0; w < 16; w += 4 {
		fmt.Fprintf(&sb, "%02X%02X%02X%02X", ip[w+3], ip[w+2], ip[w+1], ip[w])
	}
	fmt.Fprintf(&sb, ":%04X", a.Port)
	return sb.String()
}
