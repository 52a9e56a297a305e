// Command interop-server serves gRPC's interop grpc.testing.TestService on grpc-go, an
// independent peer for grpc-calls (see ../README.md).
//
// It prints "listening on HOST:PORT" once it accepts connections (--port 0 picks a free port)
// and stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	pb "grpccallsinterop/grpc_testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port to listen on (0 picks a free one)")
	useTLS := flag.Bool("tls", false, "serve TLS (needs --cert and --key)")
	certFile := flag.String("cert", "", "TLS certificate chain (PEM)")
	keyFile := flag.String("key", "", "TLS private key (PEM)")
	minTime := flag.Duration("keepalive-min-time", 0,
		"keepalive enforcement policy MinTime: the shortest ping interval clients may use (unset: grpc-go's default policy)")
	permitWithoutStream := flag.Bool("permit-without-stream", false,
		"keepalive enforcement policy: allow client pings while no stream is open")
	maxAge := flag.Duration("max-connection-age", 0,
		"keepalive.ServerParameters MaxConnectionAge: send GOAWAY to connections older than this (unset: infinite)")
	maxAgeGrace := flag.Duration("max-connection-age-grace", 0,
		"keepalive.ServerParameters MaxConnectionAgeGrace: close connections this long after MaxConnectionAge (unset: infinite)")
	maxIdle := flag.Duration("max-connection-idle", 0,
		"keepalive.ServerParameters MaxConnectionIdle: send GOAWAY to connections without an RPC for this long (unset: infinite)")
	maxStreams := flag.Uint("max-concurrent-streams", 0,
		"SETTINGS_MAX_CONCURRENT_STREAMS per connection (0: grpc-go's default, unlimited)")
	bdp := flag.Bool("bdp", true,
		"BDP estimation (dynamic flow-control windows); --bdp=false sets both initial windows to 64 KiB explicitly, which turns it off")
	compressResponses := flag.Bool("compress-responses", false,
		"gzip every response, whatever the client sent (it must accept gzip)")
	eventsPath := flag.String("events", "",
		"append 'ID METHOD OUTCOME' to this file when an RPC with x-grpc-calls-test-id ends")
	flag.Parse()
	if flag.NArg() > 0 {
		fail("unexpected argument %q (boolean flags take --flag=false, not --flag false)", flag.Arg(0))
	}

	var events *eventLog
	if *eventsPath != "" {
		var err error
		if events, err = openEventLog(*eventsPath); err != nil {
			fail("%v", err)
		}
	}

	service := &testService{compressAll: *compressResponses}
	rec := &recorder{events: events, service: service}
	opts := []grpc.ServerOption{
		grpc.UnaryInterceptor(rec.unary),
		grpc.StreamInterceptor(rec.stream),
	}
	if *useTLS {
		if *certFile == "" || *keyFile == "" {
			fail("--tls needs --cert and --key")
		}
		creds, err := credentials.NewServerTLSFromFile(*certFile, *keyFile)
		if err != nil {
			fail("loading the TLS certificate: %v", err)
		}
		opts = append(opts, grpc.Creds(creds))
	} else if *certFile != "" || *keyFile != "" {
		fail("--cert and --key need --tls")
	}
	if *minTime > 0 || *permitWithoutStream {
		// MinTime 0 is grpc-go's default (5 minutes) within a policy.
		opts = append(opts, grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             *minTime,
			PermitWithoutStream: *permitWithoutStream,
		}))
	}
	if *maxAge > 0 || *maxAgeGrace > 0 || *maxIdle > 0 {
		// Zero fields keep grpc-go's defaults (infinite).
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      *maxAge,
			MaxConnectionAgeGrace: *maxAgeGrace,
			MaxConnectionIdle:     *maxIdle,
		}))
	}
	if *maxStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(*maxStreams)))
	}
	if !*bdp {
		// grpc-go turns BDP estimation off when either window is set explicitly; 64 KiB is the
		// HTTP/2 default, so only the estimation changes.
		opts = append(opts, grpc.InitialWindowSize(65535), grpc.InitialConnWindowSize(65535))
	}
	if *compressResponses {
		// The one grpc-go 1.33 option that compresses every response, whatever the request's
		// grpc-encoding (by default grpc-go answers in the request's encoding).
		opts = append(opts, grpc.RPCCompressor(grpc.NewGZIPCompressor()))
	}

	server := grpc.NewServer(opts...)
	pb.RegisterTestServiceServer(server, service)
	healthServer := health.NewServer()
	healthServer.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthServer.SetServingStatus("grpc.testing.TestService", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(server, healthServer)
	rec.health = healthServer
	reflection.Register(server)

	listener, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		fail("could not listen on %s:%d: %v", *host, *port, err)
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	fmt.Printf("listening on %s:%d\n", *host, listener.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-signals:
	case err := <-served:
		fail("serving: %v", err)
	}
	// Like the grpcio server: a second of grace for the calls in flight, then stop.
	stopped := make(chan struct{})
	go func() { server.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Second):
		server.Stop()
	}
	if events != nil {
		events.close()
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "interop-server: "+format+"\n", args...)
	os.Exit(2)
}
