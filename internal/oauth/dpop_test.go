package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// verifyProof checks a proof as a server would, with the key from its own header.
func verifyProof(t *testing.T, proof string) (jwt.MapClaims, map[string]any) {
	t.Helper()
	claims := jwt.MapClaims{}
	var header map[string]any
	_, err := jwt.ParseWithClaims(proof, claims, func(tok *jwt.Token) (any, error) {
		header = tok.Header
		jwk, _ := tok.Header["jwk"].(map[string]any)
		x, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["x"]))
		y, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["y"]))
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	}, jwt.WithValidMethods([]string{"ES256"}))
	if err != nil {
		t.Fatalf("proof does not verify with its own jwk: %v", err)
	}
	return claims, header
}

func TestDPoPProof(t *testing.T) {
	k, err := NewDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	p, err := k.Proof("POST", "https://rs.example.com/mcp?x=1#f", "the-token", "n-1", now)
	if err != nil {
		t.Fatal(err)
	}
	claims, header := verifyProof(t, p)
	sum := sha256.Sum256([]byte("the-token"))
	want := map[string]any{"htm": "POST", "htu": "https://rs.example.com/mcp", "iat": float64(now.Unix()),
		"ath": base64.RawURLEncoding.EncodeToString(sum[:]), "nonce": "n-1"}
	for name, v := range want {
		if claims[name] != v {
			t.Errorf("%s = %v, want %v", name, claims[name], v)
		}
	}
	jwk, _ := header["jwk"].(map[string]any)
	if header["typ"] != "dpop+jwt" || jwk["d"] != nil || jwk["kty"] != "EC" {
		t.Errorf("header %v", header)
	}
	p2, _ := k.Proof("POST", "https://rs.example.com/mcp", "", "", now)
	c2, _ := verifyProof(t, p2)
	if c2["jti"] == claims["jti"] || c2["ath"] != nil || c2["nonce"] != nil {
		t.Errorf("second proof %v", c2)
	}
	if got, want := fmt.Sprintf("%v|%#v", k, k), "oauth.DPoPKey{jkt="+k.Thumbprint()+"}"; got != want+"|"+want {
		t.Errorf("printed %q: only the thumbprint may show", got)
	}
}

func TestDPoPThumbprint(t *testing.T) {
	k, _ := NewDPoPKey()
	// RFC 7638: the required members, sorted, no white space; encoding/json sorts map keys.
	canon, _ := json.Marshal(map[string]string{"kty": "EC", "crv": "P-256", "x": k.jwk["x"], "y": k.jwk["y"]})
	sum := sha256.Sum256(canon)
	if got, want := k.Thumbprint(), base64.RawURLEncoding.EncodeToString(sum[:]); got != want {
		t.Errorf("thumbprint %q, want %q", got, want)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := DPoPKeyFrom(p384); err == nil {
		t.Error("P-384 key accepted")
	}
	if _, err := k.Proof("GET", "/relative", "", "", time.Now()); err == nil {
		t.Error("relative target accepted")
	}
}

func TestDPoPTokenRequestWithNonce(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	k, _ := NewDPoPKey()
	var mu sync.Mutex
	var proofs []string
	answers := 0
	as.srv.Config.Handler.(*http.ServeMux).HandleFunc("POST /nonce-token", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		answers++
		proofs = append(proofs, r.Header.Get("DPoP"))
		claims, _ := verifyProof(t, r.Header.Get("DPoP"))
		if claims["nonce"] != "as-nonce" {
			w.Header().Set("DPoP-Nonce", "as-nonce")
			writeJSON(w, 400, map[string]any{"error": "use_dpop_nonce"})
			return
		}
		writeJSON(w, 200, map[string]any{"access_token": "bound", "token_type": "DPoP"})
	})
	md.TokenEndpoint = as.issuer() + "/nonce-token"
	cl := ClientInfo{ID: "c", AuthMethod: AuthNone, DPoP: k}
	tok, err := testClient().ClientCredentials(ctxT(t), md, cl, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if answers != 2 || proofs[0] == proofs[1] {
		t.Errorf("%d answers; proofs reused: %v", answers, proofs[0] == proofs[1])
	}
	if tok.AuthorizationHeader() != "DPoP bound" {
		t.Errorf("header %q", tok.AuthorizationHeader())
	}
	claims, _ := verifyProof(t, proofs[1])
	if claims["htu"] != md.TokenEndpoint || claims["htm"] != "POST" || claims["ath"] != nil {
		t.Errorf("token request proof %v", claims)
	}
}

func TestDPoPNonceRetriedOnce(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	as.srv.Config.Handler.(*http.ServeMux).HandleFunc("POST /always-nonce", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("DPoP-Nonce", "n")
		writeJSON(w, 400, map[string]any{"error": "use_dpop_nonce"})
	})
	md.TokenEndpoint = as.issuer() + "/always-nonce"
	k, _ := NewDPoPKey()
	_, err := testClient().ClientCredentials(ctxT(t), md, ClientInfo{ID: "c", DPoP: k}, "", nil)
	var te *TokenError
	if !errors.As(err, &te) || te.Code != "use_dpop_nonce" {
		t.Errorf("err %v, want the second use_dpop_nonce returned", err)
	}
	// Without a DPoP key the answer is an ordinary error, not retried.
	if _, err := testClient().ClientCredentials(ctxT(t), md, ClientInfo{ID: "c"}, "", nil); !errors.As(err, &te) {
		t.Errorf("err %v", err)
	}
	if DPoPNonce(http.Header{"Dpop-Nonce": {"x"}}) != "x" {
		t.Error("DPoPNonce")
	}
}
