package criproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// Proxy forwards the CRI calls made on its socket to the runtime's and times them.
type Proxy struct {
	socket string
	srv    *grpc.Server
	conn   *grpc.ClientConn
	rec    *recorder
	served chan struct{}
}

// Start listens on socket (a path; a file left there is replaced) and forwards to the
// runtime at upstream (a path or unix:// endpoint), which it dials on the first call.
func Start(socket, upstream string) (*Proxy, error) {
	upstream = strings.TrimPrefix(upstream, "unix://")
	conn, err := grpc.NewClient("passthrough:///"+upstream,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}),
		// The agents accept answers of 16 MiB (the kubelet's limit); so must the proxy, both ways.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)))
	if err != nil {
		return nil, err
	}
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		conn.Close()
		return nil, err
	}
	p := &Proxy{socket: socket, conn: conn, rec: newRecorder(), served: make(chan struct{})}
	p.srv = grpc.NewServer(
		grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(p.handle),
		grpc.MaxRecvMsgSize(maxMsgSize), grpc.MaxSendMsgSize(maxMsgSize))
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// maxMsgSize is the largest message forwarded either way, the kubelet's limit.
const maxMsgSize = 16 << 20

// Endpoint is the proxy's CRI endpoint, for --container-runtime-endpoint.
func (p *Proxy) Endpoint() string { return "unix://" + p.socket }

// Reset starts a new recording window.
func (p *Proxy) Reset() { p.rec.reset() }

// Calls are the unary calls that ended since the last Reset, by method.
func (p *Proxy) Calls() map[string]Calls { return p.rec.snapshot() }

// Close stops serving, cutting the calls in flight, and closes the connection to the runtime.
func (p *Proxy) Close() error {
	p.srv.Stop()
	<-p.served
	err := p.conn.Close()
	if rmErr := os.Remove(p.socket); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

// streaming says whether a CRI method streams its answers (and is then not timed).
func streaming(method string) bool {
	return method == "GetContainerEvents" || strings.HasPrefix(method, "Stream")
}

// handle forwards one call of any method, timing it unless it streams.
func (p *Proxy) handle(_ any, ss grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(ss)
	method := path.Base(full)
	md, _ := metadata.FromIncomingContext(ss.Context())
	// The caller's deadline and cancellation carry over: the runtime sees the call as the agent
	// made it.
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ss.Context(), md.Copy()))
	defer cancel()
	if streaming(method) {
		return p.forward(ctx, full, ss)
	}
	end := p.rec.begin(method, time.Now)
	err := p.forward(ctx, full, ss)
	end(err != nil)
	return err
}

// forward copies the caller's messages to the runtime and the runtime's answers, headers,
// trailers and status back, until the runtime ends the call.
func (p *Proxy) forward(ctx context.Context, full string, ss grpc.ServerStream) error {
	cs, err := p.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, full, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	go func() { // caller → runtime; it ends with the caller's half-close or the call
		for {
			f := &frame{}
			if err := ss.RecvMsg(f); err != nil {
				_ = cs.CloseSend()
				return
			}
			if err := cs.SendMsg(f); err != nil {
				return
			}
		}
	}()
	headerSent := false
	for {
		f := &frame{}
		if err := cs.RecvMsg(f); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err // the runtime's status, passed on as it is
		}
		if !headerSent {
			if h, err := cs.Header(); err == nil {
				_ = ss.SendHeader(h)
			}
			headerSent = true
		}
		if err := ss.SendMsg(f); err != nil {
			return err
		}
	}
}
