package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Fault is what a Proxy does to one request instead of, or besides,
// passing it on. The zero Fault passes it on.
type Fault struct {
	// Status, when not 0, answers with this HTTP status and an S3 error
	// body (of Code, or a code for the status), and the server never sees
	// the request.
	Status int
	Code   string
	// Reset closes the connection (with a TCP reset) without an answer.
	Reset bool
	// Delay waits this long before passing the request on.
	Delay time.Duration
	// CutAfter, when not 0, breaks the connection after this many bytes of
	// the server's response body.
	CutAfter int64
	// DropReply passes the request on, then resets the connection instead
	// of answering: the server did it, the client does not know.
	DropReply bool
	// Late passes the request on after this long, also when the client
	// has given up on it meanwhile: the server does it after the client's
	// deadline, as a request stuck in a busy server's queue would be.
	Late time.Duration
}

// String says what f does, for messages.
func (f Fault) String() string {
	switch {
	case f.Status != 0 && f.Code != "":
		return fmt.Sprintf("HTTP %d %s", f.Status, f.Code)
	case f.Status != 0:
		return fmt.Sprintf("HTTP %d", f.Status)
	case f.Reset:
		return "reset"
	case f.CutAfter != 0:
		return fmt.Sprintf("cut after %d bytes", f.CutAfter)
	case f.Delay != 0:
		return fmt.Sprintf("delay %v", f.Delay)
	case f.Late != 0:
		return fmt.Sprintf("late by %v", f.Late)
	case f.DropReply:
		return "reply dropped"
	}
	return "none"
}

// Request is one request a Proxy got: the N-th, from 1.
type Request struct {
	N      int
	Method string
	// Key is the request's path: /BUCKET/KEY.
	Key    string
	Query  url.Values
	Header http.Header
}

// Proxy is a fault-injecting HTTP proxy in front of a Server.
type Proxy struct {
	// Server reaches the target through the proxy: its Endpoint is the
	// proxy's.
	*Server

	mu     sync.Mutex
	n      int
	fault  func(Request) Fault
	faults []string
}

// NewProxy starts a proxy in front of target that asks fault what to do
// with each request (nil passes every one on).
func NewProxy(t testing.TB, target *Server, fault func(Request) Fault) *Proxy {
	t.Helper()
	u, err := url.Parse(target.Endpoint)
	if err != nil {
		t.Fatalf("proxy: target %s: %v", target.Endpoint, err)
	}
	p := &Proxy{fault: fault}
	rp := httputil.NewSingleHostReverseProxy(u)
	// The Host header stays the client's, which it signed; the errors of
	// connections the proxy breaks on purpose are no news.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := p.next(r)
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				return
			}
		}
		if f.Late > 0 {
			// The whole request is read before the client can give up.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			time.Sleep(f.Late)
			r = r.WithContext(context.WithoutCancel(r.Context()))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		switch {
		case f.Status != 0:
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(f.Status)
			code := f.Code
			if code == "" {
				code = errorCode(f.Status)
			}
			fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected by the test proxy</Message></Error>", code)
		case f.Reset:
			reset(w)
		case f.CutAfter > 0:
			cw := &cutWriter{ResponseWriter: w, left: f.CutAfter}
			rp.ServeHTTP(cw, r)
		case f.DropReply:
			rp.ServeHTTP(httptest.NewRecorder(), r)
			reset(w)
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p.Server = &Server{Name: "proxy to " + target.Name, Endpoint: srv.URL, Dir: target.Dir}
	return p
}

// SetFault replaces the proxy's fault function.
func (p *Proxy) SetFault(fault func(Request) Fault) {
	p.mu.Lock()
	p.fault = fault
	p.mu.Unlock()
}

// Requests returns how many requests the proxy got.
func (p *Proxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Faults returns the faults injected so far, one line each: the request's
// number, method and key, and the fault.
func (p *Proxy) Faults() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.faults...)
}

func (p *Proxy) next(r *http.Request) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.fault == nil {
		return Fault{}
	}
	req := Request{N: p.n, Method: r.Method, Key: r.URL.Path, Query: r.URL.Query(), Header: r.Header}
	f := p.fault(req)
	if f != (Fault{}) {
		p.faults = append(p.faults, fmt.Sprintf("%d %s %s: %s", req.N, req.Method, req.Key, f))
	}
	return f
}

// EveryNth returns a fault function that injects f into every n-th
// request (n, 2n, ...).
func EveryNth(n int, f Fault) func(Request) Fault {
	return func(r Request) Fault {
		if r.N%n == 0 {
			return f
		}
		return Fault{}
	}
}

func errorCode(status int) string {
	switch status {
	case http.StatusServiceUnavailable:
		return "SlowDown"
	case http.StatusTooManyRequests:
		return "TooManyRequests"
	case http.StatusInternalServerError:
		return "InternalError"
	}
	return "InjectedFault"
}

// reset closes the client's connection with a TCP reset.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}

// cutWriter passes left bytes of a response body on, then breaks the
// connection.
type cutWriter struct {
	http.ResponseWriter
	left int64
	cut  bool
}

var errCut = errors.New("connection cut by the test proxy")

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.cut {
		return 0, errCut
	}
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	n, _ := c.ResponseWriter.Write(p[:c.left])
	_ = http.NewResponseController(c.ResponseWriter).Flush()
	c.left, c.cut = 0, true
	reset(c.ResponseWriter)
	return n, errCut
}

// FlushError flushes until the connection is cut.
func (c *cutWriter) FlushError() error {
	if c.cut {
		return errCut
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}
