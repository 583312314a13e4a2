package sealbox

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func ring(t *testing.T, keys ...[]byte) *Ring {
	t.Helper()
	r, err := New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRoundTrip: what Seal writes, Open gives back, with the header it documents; two
// seals of one value differ (random nonce).
func TestRoundTrip(t *testing.T) {
	r := ring(t, key(1))
	aad := AAD("grant", "github", "alice")
	for _, plain := range [][]byte{nil, []byte("x"), []byte(`{"access_token":"at","refresh_token":"rt"}`), bytes.Repeat([]byte("z"), 5000)} {
		s := r.Seal(plain, aad)
		if len(s) != minSealed+len(plain) || s[0] != version || KeyID(key(1)) != r.SealingKeyID() || hex.EncodeToString(s[1:5]) != r.SealingKeyID() {
			t.Fatalf("sealed %d bytes: len %d, header %x", len(plain), len(s), s[:5])
		}
		if bytes.Contains(s, []byte("refresh_token")) {
			t.Fatal("plaintext visible in the sealed form")
		}
		got, err := r.Open(s, aad)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Open = %q, %v; want %q", got, err, plain)
		}
		if bytes.Equal(s, r.Seal(plain, aad)) {
			t.Error("two seals of one value are equal: nonce reused")
		}
	}
}

// TestRotation: a ring with a new key first seals with the new key and still opens what
// the old key sealed; once the old key leaves the ring, its records fail as unknown.
func TestRotation(t *testing.T) {
	oldRing := ring(t, key(1))
	aad := []byte("client\x00srv\x00")
	old := oldRing.Seal([]byte("secret"), aad)

	rotated := ring(t, key(2), key(1))
	if got, err := rotated.Open(old, aad); err != nil || string(got) != "secret" {
		t.Fatalf("old record under the rotated ring: %q, %v", got, err)
	}
	if !rotated.NeedsReseal(old) {
		t.Error("NeedsReseal(old record) = false under the rotated ring")
	}
	fresh := rotated.Seal([]byte("secret"), aad)
	if rotated.NeedsReseal(fresh) || oldRing.NeedsReseal(old) {
		t.Error("NeedsReseal true for a record of the sealing key")
	}
	if _, err := oldRing.Open(fresh, aad); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("new record under the old ring: %v, want ErrUnknownKey", err)
	}
	retired := ring(t, key(2))
	_, err := retired.Open(old, aad)
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), KeyID(key(1))) || !strings.Contains(err.Error(), "rotated out") {
		t.Errorf("record of a retired key: %v, want ErrUnknownKey naming key %s", err, KeyID(key(1)))
	}
	if retired.NeedsReseal(old) {
		t.Error("NeedsReseal true for a record no key of the ring opens")
	}
}

// TestWrongAAD: a sealed value opened for another record (or with the parts shifted
// between fields) does not open.
func TestWrongAAD(t *testing.T) {
	r := ring(t, key(1))
	s := r.Seal([]byte("token"), AAD("grant", "github", "alice"))
	for _, aad := range [][]byte{AAD("grant", "github", "bob"), AAD("grant", "gitlab", "alice"), AAD("flow", "github", "alice"),
		AAD("grant", "githu", "balice"), nil, []byte("grantgithubalice")} {
		if _, err := r.Open(s, aad); !errors.Is(err, ErrTampered) {
			t.Errorf("Open with aad %q: %v, want ErrTampered", aad, err)
		}
	}
	if !bytes.Equal(AAD("a:b", "c"), AAD("a:b", "c")) || bytes.Equal(AAD("a:b", "c"), AAD("a", "b:c")) || bytes.Equal(AAD("ab", ""), AAD("a", "b")) {
		t.Error("AAD does not keep its parts apart")
	}
}

// TestFlippedBits: any single flipped bit fails, wherever it is: header bits as malformed
// or unknown key, the rest as tampered. None opens.
func TestFlippedBits(t *testing.T) {
	r := ring(t, key(1), key(2))
	aad := []byte("aad")
	s := r.Seal([]byte("a refresh token"), aad)
	for i := range len(s) * 8 {
		c := bytes.Clone(s)
		c[i/8] ^= 1 << (i % 8)
		_, err := r.Open(c, aad)
		var want error
		switch {
		case i/8 == 0:
			want = ErrMalformed
		case i/8 < headSize:
			want = ErrUnknownKey
		default:
			want = ErrTampered
		}
		if !errors.Is(err, want) {
			t.Fatalf("bit %d flipped: %v, want %v", i, err, want)
		}
	}
}

// TestTruncated: every prefix of a sealed value fails, as malformed when it is shorter
// than a header, nonce and tag.
func TestTruncated(t *testing.T) {
	r := ring(t, key(1))
	s := r.Seal([]byte("token"), nil)
	for n := range len(s) {
		_, err := r.Open(s[:n], nil)
		if err == nil {
			t.Fatalf("%d of %d bytes opened", n, len(s))
		}
		if n < minSealed && !errors.Is(err, ErrMalformed) {
			t.Errorf("%d bytes: %v, want ErrMalformed", n, err)
		}
	}
	if _, err := r.Open(append(bytes.Clone(s), 0), nil); !errors.Is(err, ErrTampered) {
		t.Errorf("one byte appended: %v, want ErrTampered", err)
	}
}

// TestNew: keys of the wrong size, none, or one twice are refused, naming positions.
func TestNew(t *testing.T) {
	for _, c := range []struct {
		keys [][]byte
		want string
	}{
		{nil, "no keys"},
		{[][]byte{key(1), make([]byte, 16)}, "key 2 of 2 is 16 bytes"},
		{[][]byte{key(1), key(2), key(1)}, "key 3 of 3 repeats key 1"},
	} {
		if _, err := New(c.keys...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%d keys) = %v, want %q", len(c.keys), err, c.want)
		}
	}
	// The ring keeps no reference to the caller's key.
	k := key(7)
	r := ring(t, k)
	s := r.Seal([]byte("x"), nil)
	clear(k)
	if _, err := r.Open(s, nil); err != nil {
		t.Errorf("after clearing the caller's key: %v", err)
	}
}

// TestParseKeys: every base64 form reads; bad text is refused with its position and
// without a byte of it in the message.
func TestParseKeys(t *testing.T) {
	k1, k2 := key(0xfb), key(0xfe) // bytes whose base64 differs between std and URL
	forms := []string{
		base64.StdEncoding.EncodeToString(k1), base64.RawStdEncoding.EncodeToString(k1),
		base64.URLEncoding.EncodeToString(k1), base64.RawURLEncoding.EncodeToString(k1),
	}
	for _, f := range forms {
		r, err := ParseKeys(f + " , \n" + base64.RawURLEncoding.EncodeToString(k2) + "\n")
		if err != nil {
			t.Fatalf("ParseKeys(%q…): %v", f, err)
		}
		if r.SealingKeyID() != KeyID(k1) || len(r.keys) != 2 || r.keys[1].id != keyID(k2) {
			t.Errorf("ParseKeys(%q…): keys %s…", f, r.SealingKeyID())
		}
	}
	if _, err := ParseKeys(NewKeyText()); err != nil {
		t.Errorf("NewKeyText does not parse: %v", err)
	}
	if a, b := NewKeyText(), NewKeyText(); a == b {
		t.Error("NewKeyText repeats itself")
	}
	secret := "c2VjcmV0LWtleS1tYXRlcmlhbC10aGF0LWlzLXNob3J0"
	good := forms[0]
	for _, c := range []struct{ text, want string }{
		{"", "no keys"},
		{"  \n", "no keys"},
		{good + ",", "key 2 of 2 is empty"},
		{good + ",," + good, "key 2 of 3 is empty"},
		{good + "," + secret, "key 2 of 2 decodes to 33 bytes"},
		{"!!" + secret + "," + good, "key 1 of 2 is not base64"},
		{good + "," + good, "key 2 of 2 repeats key 1"},
	} {
		_, err := ParseKeys(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseKeys(%q) = %v, want %q", c.text, err, c.want)
			continue
		}
		for _, leak := range []string{secret, secret[:8], good[:8]} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("error %q quotes key text", err)
			}
		}
	}
}
