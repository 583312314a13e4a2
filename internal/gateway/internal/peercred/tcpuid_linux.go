package peercred

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// TCPPeerUID names the user that owns the other end of a TCP connection on this host:
// the socket whose local address is remote and whose peer is local. It asks the kernel
// with one sock_diag query by the connection's exact four-tuple (what `ss` does), so its
// cost does not grow with the number of sockets on the host. It fails when the kernel
// has no inet_diag (the caller then knows no user, and asks for a credential).
func TCPPeerUID(remote, local *net.TCPAddr) (int, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkSockDiag)
	if err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	defer syscall.Close(fd)
	tv := syscall.Timeval{Sec: 1}
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	if err := syscall.Sendto(fd, diagRequest(remote, local), 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	buf := make([]byte, 8192)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	return diagUID(buf[:n])
}

const (
	netlinkSockDiag  = 4  // NETLINK_SOCK_DIAG
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	nlmsgError       = 2  // NLMSG_ERROR
	nlmsgHdrLen      = 16
	diagReqLen       = 56 // struct inet_diag_req_v2
	diagUIDOffset    = 64 // idiag_uid in struct inet_diag_msg
)

// diagRequest is a netlink message asking for the one TCP socket whose source is src and
// destination dst (struct inet_diag_req_v2; ports big-endian, no cookie).
func diagRequest(src, dst *net.TCPAddr) []byte {
	b := make([]byte, nlmsgHdrLen+diagReqLen)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(b[6:], syscall.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(b[8:], 1) // sequence
	r := b[nlmsgHdrLen:]
	r[0] = syscall.AF_INET6
	s4, d4 := src.IP.To4(), dst.IP.To4()
	if s4 != nil && d4 != nil {
		r[0] = syscall.AF_INET
	}
	r[1] = syscall.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], ^uint32(0)) // every state
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], uint16(src.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(dst.Port))
	if r[0] == syscall.AF_INET {
		copy(id[4:], s4)
		copy(id[20:], d4)
	} else {
		copy(id[4:], src.IP.To16())
		copy(id[20:], dst.IP.To16())
	}
	binary.NativeEndian.PutUint32(id[40:], ^uint32(0)) // INET_DIAG_NOCOOKIE
	binary.NativeEndian.PutUint32(id[44:], ^uint32(0))
	return b
}

// diagUID reads the uid from the kernel's answer to diagRequest.
func diagUID(b []byte) (int, error) {
	if len(b) < nlmsgHdrLen {
		return -1, errors.New("sock_diag: short answer")
	}
	switch binary.NativeEndian.Uint16(b[4:]) {
	case sockDiagByFamily:
		if len(b) < nlmsgHdrLen+diagUIDOffset+4 {
			return -1, errors.New("sock_diag: short answer")
		}
		return int(binary.NativeEndian.Uint32(b[nlmsgHdrLen+diagUIDOffset:])), nil
	case nlmsgError:
		if len(b) >= nlmsgHdrLen+4 {
			if errno := -int32(binary.NativeEndian.Uint32(b[nlmsgHdrLen:])); errno > 0 {
				return -1, fmt.Errorf("sock_diag: %w", syscall.Errno(errno))
			}
		}
	}
	return -1, errors.New("sock_diag: unexpected answer")
}
