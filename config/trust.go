package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads http.trusted_proxies: each an IP address or a CIDR prefix.
func ParseTrustedProxies(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for i, s := range list {
		s = strings.TrimSpace(s)
		var p netip.Prefix
		var err error
		if strings.Contains(s, "/") {
			p, err = netip.ParsePrefix(s)
		} else {
			var a netip.Addr
			if a, err = netip.ParseAddr(s); err == nil {
				p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			}
		}
		if err != nil {
			return nil, fmt.Errorf("http.trusted_proxies[%d]: %q is not an IP address or CIDR prefix", i, s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// trustProblems checks http.trusted_proxies.
func (c validator) trustProblems() Problems {
	if _, err := ParseTrustedProxies(c.HTTP.TrustedProxies); err != nil {
		where, text, _ := strings.Cut(err.Error(), ": ")
		return Problems{{Where: where, Text: text}}
	}
	return nil
}
