package main

// Compression, as far as grpc-go 1.33 lets a handler see and steer it.
//
// Seeing it (expect_compressed): grpc-go tells a handler neither a request's grpc-encoding nor
// a message's compressed flag. It does call the registered compressor's Decompress for each
// message that has the flag set, and only for those, on the goroutine that reads the message:
// for a unary RPC the goroutine that then runs the interceptor and handler, for a streaming
// one the handler's goroutine inside RecvMsg. So this package registers its own "gzip"
// compressor whose Decompress marks the calling goroutine, and the interceptors take the mark
// right after the read (takeDecompressed): exact per message, whatever else runs at the time.
//
// Steering it (response_compressed, ResponseParameters.compressed): grpc-go compresses a
// response when the request came with grpc-encoding gzip (it answers in the request's
// encoding) or, with --compress-responses, always; a handler has no API to change that per
// message (grpc.SetSendCompressor came years later). For streaming RPCs this server switches
// the stream's compressor per message by setting grpc-go's private serverStream.comp field,
// and names gzip in the response headers (transport stream's SetSendCompress) before they
// leave; when the field is not there (another grpc-go) or the headers have gone, the response
// keeps the RPC's compression and a note goes to stderr. A unary response cannot be switched:
// it is compressed exactly when the request was (or with --compress-responses).

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	pb "grpccallsinterop/grpc_testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

func init() {
	encoding.RegisterCompressor(gzipCompressor{})
}

// gzipCompressor is grpc-go's "gzip" compressor, marking the goroutines it decompresses on.
type gzipCompressor struct{}

func (gzipCompressor) Name() string { return "gzip" }

func (gzipCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	return gzip.NewWriter(w), nil
}

func (gzipCompressor) Decompress(r io.Reader) (io.Reader, error) {
	decompressed.Store(goroutineID(), struct{}{})
	return gzip.NewReader(r)
}

// decompressed holds the goroutines that have decompressed a message since their last
// takeDecompressed.
var decompressed sync.Map

// takeDecompressed reports whether this goroutine decompressed a message since its last call.
func takeDecompressed() bool {
	_, ok := decompressed.LoadAndDelete(goroutineID())
	return ok
}

// goroutineID is the calling goroutine's id, from the first line of its stack trace
// ("goroutine 42 [running]:"); ids are never reused while the program runs.
func goroutineID() uint64 {
	var buf [64]byte
	line := buf[:runtime.Stack(buf[:], false)]
	line = bytes.TrimPrefix(line, []byte("goroutine "))
	if i := bytes.IndexByte(line, ' '); i > 0 {
		line = line[:i]
	}
	id, err := strconv.ParseUint(string(line), 10, 64)
	if err != nil {
		panic("interop-server: cannot read the goroutine id from " + strconv.Quote(string(buf[:])))
	}
	return id
}

// compression is an RPC's response compression.
type compression struct {
	all bool // --compress-responses: every response is compressed, nothing to switch
	// on: the responses are being compressed; announced: the response headers name gzip.
	on, announced bool
	// byDefault: grpc-go's choice for the RPC (the request's encoding is gzip, or all).
	byDefault bool
	// comp is grpc-go's serverStream.comp (settable), invalid for unary RPCs.
	comp   reflect.Value
	warned bool
}

var compressorType = reflect.TypeOf((*encoding.Compressor)(nil)).Elem()

func unaryCompression(ctx context.Context, all bool) compression {
	c := compression{all: all, on: all, announced: all, byDefault: all}
	if s, ok := grpc.ServerTransportStreamFromContext(ctx).(interface{ RecvCompress() string }); ok && s.RecvCompress() == "gzip" {
		c.on, c.announced, c.byDefault = true, true, true
	}
	return c
}

func streamCompression(ss grpc.ServerStream, all bool) compression {
	c := compression{all: all, on: all, announced: all, byDefault: all}
	if all {
		return c
	}
	v := reflect.ValueOf(ss)
	if v.Kind() != reflect.Ptr || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return c
	}
	f := v.Elem().FieldByName("comp")
	if !f.IsValid() || f.Type() != compressorType || !f.CanAddr() {
		return c
	}
	c.comp = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	c.on = !c.comp.IsNil()
	c.announced, c.byDefault = c.on, c.on
	return c
}

// announceCompression names gzip in the response headers if they have not left yet, so that
// later responses can be compressed.
func (st *rpcState) announceCompression(ctx context.Context) {
	if st.announced || st.headerSent || !st.comp.IsValid() {
		return
	}
	if s, ok := grpc.ServerTransportStreamFromContext(ctx).(interface{ SetSendCompress(string) }); ok {
		s.SetSendCompress("gzip")
		st.announced = true
	}
}

// setResponseCompression compresses the next responses with gzip, or not, if it can; asked
// is the request's BoolValue, nil for the RPC's default.
func (st *rpcState) setResponseCompression(ctx context.Context, asked *pb.BoolValue) {
	on := st.byDefault
	if asked != nil {
		on = asked.GetValue()
	}
	if st.all || on == st.on {
		return
	}
	if on {
		st.announceCompression(ctx)
	}
	if !st.comp.IsValid() || !st.announced {
		if !st.warned {
			st.warned = true
			fmt.Fprintf(os.Stderr, "interop-server: %s: cannot switch response compression %s for this response (see compression.go)\n",
				st.method, map[bool]string{true: "on", false: "off"}[on])
		}
		return
	}
	if on {
		st.comp.Set(reflect.ValueOf(gzipCompressor{}))
	} else {
		st.comp.Set(reflect.Zero(compressorType))
	}
	st.on = on
}
