package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	// testIDKey names an RPC in the --events file.
	testIDKey = "x-grpc-calls-test-id"
	// sleepKey makes the handler wait that many milliseconds before it answers.
	sleepKey = "x-grpc-calls-sleep-ms"
)

// rpcState is what the interceptors learn about one RPC; handlers reach it through the
// context (stateFrom). grpc-go runs a handler, its interceptor and the reads of its request
// messages on one goroutine, so the fields need no lock.
type rpcState struct {
	method string
	start  time.Time
	// unaryCompressed: the unary request message came with the compressed flag set.
	unaryCompressed bool
	// lastCompressed: the last message RecvMsg returned came with the compressed flag set.
	lastCompressed bool
	// sawEOF: RecvMsg returned io.EOF, the client ended its request stream (END_STREAM).
	sawEOF bool
	// transportErr: the first error RecvMsg or SendMsg returned other than io.EOF.
	transportErr error
	// headerSent: the response headers have left (or will leave with the next message).
	headerSent bool
	compression
}

type stateKey struct{}

func stateFrom(ctx context.Context) *rpcState {
	if st, ok := ctx.Value(stateKey{}).(*rpcState); ok {
		return st
	}
	return &rpcState{} // not reached: every RPC goes through the interceptors
}

// recorder holds the interceptors: they keep each RPC's rpcState, apply x-grpc-calls-sleep-ms
// and write the --events record.
type recorder struct {
	events  *eventLog
	service *testService
	health  *health.Server
}

func (r *recorder) unary(ctx context.Context, req interface{}, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (interface{}, error) {
	applySetHealth(ctx, r.health)
	// grpc-go read and decompressed the request on this goroutine before it called us.
	st := &rpcState{method: bareMethod(info.FullMethod), start: time.Now(), unaryCompressed: takeDecompressed()}
	defer takeDecompressed()
	st.compression = unaryCompression(ctx, r.service.compressAll)
	ctx = context.WithValue(ctx, stateKey{}, st)
	var resp interface{}
	err := r.run(ctx, st, false, func() error {
		var err error
		resp, err = handler(ctx, req)
		return err
	})
	return resp, err
}

func (r *recorder) stream(srv interface{}, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	applySetHealth(ss.Context(), r.health)
	st := &rpcState{method: bareMethod(info.FullMethod), start: time.Now()}
	defer takeDecompressed()
	st.compression = streamCompression(ss, r.service.compressAll)
	ctx := context.WithValue(ss.Context(), stateKey{}, st)
	wrapped := &recordingStream{ServerStream: ss, ctx: ctx, st: st}
	return r.run(ctx, st, info.IsClientStream, func() error { return handler(srv, wrapped) })
}

// run sleeps as x-grpc-calls-sleep-ms asks, calls the handler and records the outcome.
func (r *recorder) run(ctx context.Context, st *rpcState, clientStream bool, call func() error) error {
	md, _ := metadata.FromIncomingContext(ctx)
	err := sleepIfAsked(ctx, md)
	if err == nil {
		err = call()
	}
	if ids := md.Get(testIDKey); len(ids) > 0 && r.events != nil {
		r.events.record(ids[0], st.method, st.outcome(ctx, err, clientStream))
	}
	return err
}

func sleepIfAsked(ctx context.Context, md metadata.MD) error {
	values := md.Get(sleepKey)
	if len(values) == 0 {
		return nil
	}
	ms, err := strconv.ParseUint(strings.TrimSpace(values[0]), 10, 31)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %q is not a number of milliseconds", sleepKey, values[0])
	}
	return sleep(ctx, time.Duration(ms)*time.Millisecond)
}

// outcome is the --events record's OUTCOME for an RPC whose handler returned err:
//
//   - "cancelled" or "deadline" if the RPC was cancelled while the handler ran: its context was
//     done when the handler returned, or a read or write failed with CANCELLED or
//     DEADLINE_EXCEEDED. grpc-go cancels the context only when the client resets the stream
//     (RST_STREAM), the connection goes or the deadline passes, never because the client
//     half-closed, and only after the handler has returned when the RPC ends normally. A write
//     that failed because the client's reset marked the stream done counts too, once the
//     context's cancel that follows it has come.
//     "deadline" if grpc-go's deadline expired, or if the client's reset came within
//     min(100 ms, a quarter of the timeout) of the deadline: a client whose deadline passes
//     resets the stream with CANCEL, which can arrive before the server's own timer fires.
//   - "error:CODE: message" if the handler failed otherwise;
//   - "error:the handler returned before the request stream ended" if a client-streaming or
//     bidirectional handler returned OK without reading END_STREAM (not done by this server);
//   - "complete" otherwise: the handler returned OK and, for client-streaming and
//     bidirectional methods, had read the client's END_STREAM (io.EOF).
func (st *rpcState) outcome(ctx context.Context, err error, clientStream bool) string {
	cause := ctx.Err()
	if cause == nil && status.Code(st.transportErr) == codes.Internal {
		// grpc-go marks a reset stream done before it cancels the stream's context
		// (http2Server.closeStream): a write in between fails with INTERNAL ("the stream is
		// done") while the context is not cancelled yet. The cancel follows at once; wait for
		// it (a write that failed for another reason leaves the context alone: then the wait
		// ends without a cause).
		select {
		case <-ctx.Done():
			cause = ctx.Err()
		case <-time.After(30 * time.Second):
		}
	}
	if cause == nil {
		switch status.Code(st.transportErr) {
		case codes.Canceled:
			cause = context.Canceled
		case codes.DeadlineExceeded:
			cause = context.DeadlineExceeded
		}
	}
	if cause == context.DeadlineExceeded || (cause != nil && st.nearDeadline(ctx)) {
		return "deadline"
	}
	if cause != nil {
		return "cancelled"
	}
	if err != nil {
		s := status.Convert(err)
		return fmt.Sprintf("error:%s: %s", codeName(s.Code()), s.Message())
	}
	if clientStream && !st.sawEOF {
		return "error:the handler returned before the request stream ended"
	}
	return "complete"
}

func (st *rpcState) nearDeadline(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	if !ok {
		return false
	}
	slack := deadline.Sub(st.start) / 4
	if slack > 100*time.Millisecond {
		slack = 100 * time.Millisecond
	}
	return !time.Now().Before(deadline.Add(-slack))
}

// recordingStream is the ServerStream handlers see: it notes what each read returned.
type recordingStream struct {
	grpc.ServerStream
	ctx context.Context
	st  *rpcState
}

func (s *recordingStream) Context() context.Context { return s.ctx }

func (s *recordingStream) RecvMsg(m interface{}) error {
	takeDecompressed() // nothing left over from an earlier failed read
	err := s.ServerStream.RecvMsg(m)
	s.st.lastCompressed = takeDecompressed()
	if err == io.EOF {
		s.st.sawEOF = true
	} else if err != nil && s.st.transportErr == nil {
		s.st.transportErr = err
	}
	return err
}

func (s *recordingStream) SendMsg(m interface{}) error {
	s.st.headerSent = true
	err := s.ServerStream.SendMsg(m)
	if err != nil && s.st.transportErr == nil {
		s.st.transportErr = err
	}
	return err
}

func (s *recordingStream) SendHeader(md metadata.MD) error {
	s.st.headerSent = true
	return s.ServerStream.SendHeader(md)
}

// bareMethod is "FullDuplexCall" for "/grpc.testing.TestService/FullDuplexCall".
func bareMethod(fullMethod string) string {
	return fullMethod[strings.LastIndex(fullMethod, "/")+1:]
}

var codeNames = map[codes.Code]string{
	codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN",
	codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
	codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
	codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED",
	codes.OutOfRange: "OUT_OF_RANGE", codes.Unimplemented: "UNIMPLEMENTED",
	codes.Internal: "INTERNAL", codes.Unavailable: "UNAVAILABLE", codes.DataLoss: "DATA_LOSS",
	codes.Unauthenticated: "UNAUTHENTICATED",
}

// codeName is the canonical name of a status code (as the grpcio server writes it).
func codeName(c codes.Code) string {
	if name, ok := codeNames[c]; ok {
		return name
	}
	return fmt.Sprintf("CODE_%d", uint32(c))
}

// eventLog is the --events file: one "ID METHOD OUTCOME" line per recorded RPC, each written
// whole with one write to a file opened for appending.
type eventLog struct {
	mu   sync.Mutex
	file *os.File
}

func openEventLog(path string) (*eventLog, error) {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the events file: %v", err)
	}
	return &eventLog{file: file}, nil
}

func (l *eventLog) record(id, method, outcome string) {
	id = strings.Join(strings.Fields(id), "_")
	if id == "" {
		id = "_"
	}
	outcome = strings.Join(strings.Fields(outcome), " ")
	line := id + " " + method + " " + outcome + "\n"
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.file.Write([]byte(line)); err != nil {
		fmt.Fprintf(os.Stderr, "interop-server: writing the events file: %v\n", err)
	}
}

func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.file.Close()
}
