// Package sealbox seals small secrets at rest (upstream tokens in the session store) with
// AES-256-GCM under a key ring, so that keys can rotate: the first key seals, every key opens.
package sealbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// The sealed form is version | key id | nonce | ciphertext and GCM tag.
const (
	version   byte = 1
	idSize         = 4
	nonceSize      = 12
	tagSize        = 16
	headSize       = 1 + idSize
	minSealed      = headSize + nonceSize + tagSize
)

// Error is a sealbox error, compared with errors.Is. Errors returned by Open wrap one of
// the constants below with what a user needs to act (the key id), never key bytes.
type Error string

func (e Error) Error() string { return string(e) }

const (
	// ErrUnknownKey: the record was sealed with a key that is not in the ring (it was
	// rotated out, or the ring is another install's). Only the key that sealed it opens it.
	ErrUnknownKey Error = "sealbox: sealed with a key that is not in the ring (rotated out?)"
	// ErrTampered: the key is known but authentication failed: the record was changed, or
	// it is opened with another AAD than it was sealed with (copied to another record).
	ErrTampered Error = "sealbox: does not open: tampered with, or sealed for another record"
	// ErrMalformed: the input is too short or of an unknown version: not sealbox output.
	ErrMalformed Error = "sealbox: malformed sealed data"
)

// Ring is a key ring: one or more AES-256 keys. The first seals; every one opens what it
// sealed. A Ring is made by New, ParseKeys or LoadOrCreate; it is safe for concurrent use
// and never changes after it is made.
type Ring struct {
	keys []ringKey
}

type ringKey struct {
	id   [idSize]byte
	aead cipher.AEAD
}

// KeyID is a key's short id: the first 4 bytes of its SHA-256, in hex. It is written in
// every sealed record so that Open picks the right key, and it names keys in errors and
// logs without revealing them.
func KeyID(key []byte) string {
	id := keyID(key)
	return hex.EncodeToString(id[:])
}

func keyID(key []byte) (id [idSize]byte) {
	sum := sha256.Sum256(key)
	copy(id[:], sum[:idSize])
	return id
}

// New makes a ring of keys, each KeySize bytes, the sealing key first. Two keys with one
// id (the same key twice) are refused: Open could not tell them apart. The ring copies
// nothing it does not need: the caller may clear keys afterwards.
func New(keys ...[]byte) (*Ring, error) {
	if len(keys) == 0 {
		return nil, Error("sealbox: no keys")
	}
	r := &Ring{keys: make([]ringKey, 0, len(keys))}
	for i, k := range keys {
		if len(k) != KeySize {
			return nil, fmt.Errorf("sealbox: key %d of %d is %d bytes, want %d", i+1, len(keys), len(k), KeySize)
		}
		id := keyID(k)
		for j, o := range r.keys {
			if o.id == id {
				return nil, fmt.Errorf("sealbox: key %d of %d repeats key %d (id %x)", i+1, len(keys), j+1, id)
			}
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("sealbox: key %d of %d: %w", i+1, len(keys), err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("sealbox: key %d of %d: %w", i+1, len(keys), err)
		}
		r.keys = append(r.keys, ringKey{id: id, aead: aead})
	}
	return r, nil
}

// ParseKeys makes a ring from text: comma-separated keys, each KeySize bytes in base64
// (standard or URL alphabet, padded or not), the sealing key first; spaces and newlines
// around a key are ignored. An error names the position of a bad key, never its text.
func ParseKeys(s string) (*Ring, error) {
	parts := strings.Split(s, ",")
	keys := make([][]byte, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			if len(parts) == 1 {
				return nil, Error("sealbox: no keys")
			}
			return nil, fmt.Errorf("sealbox: key %d of %d is empty", i+1, len(parts))
		}
		k, ok := decodeKey(p)
		if !ok {
			return nil, fmt.Errorf("sealbox: key %d of %d is not base64", i+1, len(parts))
		}
		if len(k) != KeySize {
			return nil, fmt.Errorf("sealbox: key %d of %d decodes to %d bytes, want %d", i+1, len(parts), len(k), KeySize)
		}
		keys = append(keys, k)
	}
	return New(keys...)
}

// decodeKey reads base64 in any of the four usual forms. It reports no decoder error:
// those quote offsets of the key text.
func decodeKey(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			return k, true
		}
	}
	return nil, false
}

// NewKeyText returns a fresh random key as ParseKeys reads it (standard base64).
func NewKeyText() string {
	k := make([]byte, KeySize)
	rand.Read(k) // never fails (crypto/rand: it crashes the program instead)
	return base64.StdEncoding.EncodeToString(k)
}

// AAD joins the parts that name a record's place (kind, server, subject) into associated
// data for Seal and Open. Each part is length-prefixed, so that ("a:b", "c") and
// ("a", "b:c") bind differently.
func AAD(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// SealingKeyID is the id of the key that seals (the ring's first).
func (r *Ring) SealingKeyID() string { return hex.EncodeToString(r.keys[0].id[:]) }

// Seal encrypts and authenticates plain, bound to aad: Open must be given the same aad.
// Callers pass what names the record's place (kind, server, subject), so that a sealed
// value copied into another record does not open there. The nonce is random (96 bits):
// safe for far more records than a store holds under one key.
func (r *Ring) Seal(plain, aad []byte) []byte {
	k := &r.keys[0]
	out := make([]byte, headSize+nonceSize, minSealed+len(plain))
	out[0] = version
	copy(out[1:headSize], k.id[:])
	rand.Read(out[headSize:]) // never fails (crypto/rand: it crashes the program instead)
	return k.aead.Seal(out, out[headSize:headSize+nonceSize], plain, boundAAD(out[:headSize], aad))
}

// Open checks and decrypts what Seal wrote, with the key it was sealed with. Errors wrap
// ErrMalformed, ErrUnknownKey or ErrTampered.
func (r *Ring) Open(sealed, aad []byte) ([]byte, error) {
	k, err := r.keyOf(sealed)
	if err != nil {
		return nil, err
	}
	nonce := sealed[headSize : headSize+nonceSize]
	plain, err := k.aead.Open(nil, nonce, sealed[headSize+nonceSize:], boundAAD(sealed[:headSize], aad))
	if err != nil {
		return nil, fmt.Errorf("%w (key %x)", ErrTampered, k.id)
	}
	return plain, nil
}

// NeedsReseal reports whether sealed opens with a key of the ring other than the sealing
// one: after a rotation, the caller re-seals such a record (Open, then Seal) so that the
// old key can leave the ring. Malformed or unknown input is false: Open says why.
func (r *Ring) NeedsReseal(sealed []byte) bool {
	k, err := r.keyOf(sealed)
	return err == nil && k != &r.keys[0]
}

// keyOf checks the header of sealed and returns the key that sealed it.
func (r *Ring) keyOf(sealed []byte) (*ringKey, error) {
	if len(sealed) < minSealed {
		return nil, fmt.Errorf("%w: %d bytes, at least %d expected", ErrMalformed, len(sealed), minSealed)
	}
	if sealed[0] != version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrMalformed, sealed[0], version)
	}
	for i := range r.keys {
		if string(r.keys[i].id[:]) == string(sealed[1:headSize]) {
			return &r.keys[i], nil
		}
	}
	return nil, fmt.Errorf("%w (key %x)", ErrUnknownKey, sealed[1:headSize])
}

// boundAAD is the data GCM authenticates besides the ciphertext: the header (version and
// key id, so that neither can be changed) and the caller's aad. The header has a fixed
// length, so the two cannot run into each other.
func boundAAD(head, aad []byte) []byte {
	b := make([]byte, 0, len(head)+len(aad))
	return append(append(b, head...), aad...)
}
