package main

import (
	"context"
	"fmt"
	"io"
	"time"

	pb "grpccallsinterop/grpc_testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	echoInitialKey   = "x-grpc-test-echo-initial"
	echoTrailingKey  = "x-grpc-test-echo-trailing-bin"
	echoUserAgentKey = "x-grpc-test-echo-useragent"
)

// testService is grpc.testing.TestService as gRPC's interop test descriptions specify it.
type testService struct {
	pb.UnimplementedTestServiceServer
	// compressAll is --compress-responses: every response is gzipped.
	compressAll bool
}

func (t *testService) EmptyCall(ctx context.Context, _ *pb.Empty) (*pb.Empty, error) {
	if err := echoMetadata(ctx, nil); err != nil {
		return nil, err
	}
	return &pb.Empty{}, nil
}

func (t *testService) UnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	if err := echoMetadata(ctx, nil); err != nil {
		return nil, err
	}
	st := stateFrom(ctx)
	if req.GetExpectCompressed().GetValue() && !st.unaryCompressed {
		return nil, status.Error(codes.InvalidArgument, "expected a compressed request message")
	}
	if err := echoStatus(req.GetResponseStatus()); err != nil {
		return nil, err
	}
	if err := richStatusIfAsked(ctx); err != nil {
		return nil, err
	}
	st.setResponseCompression(ctx, req.GetResponseCompressed())
	body, err := payload(req.GetResponseSize())
	if err != nil {
		return nil, err
	}
	return &pb.SimpleResponse{Payload: body}, nil
}

func (t *testService) CacheableUnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	if err := echoMetadata(ctx, metadata.Pairs("cache-control", "max-age=60, public")); err != nil {
		return nil, err
	}
	body := []byte(fmt.Sprint(time.Now().UnixNano()))
	return &pb.SimpleResponse{Payload: &pb.Payload{Body: body}}, nil
}

func (t *testService) StreamingOutputCall(req *pb.StreamingOutputCallRequest, stream pb.TestService_StreamingOutputCallServer) error {
	ctx := stream.Context()
	st := stateFrom(ctx)
	// The response headers must name gzip before they leave if any response is to be compressed.
	for _, parameters := range req.GetResponseParameters() {
		if parameters.GetCompressed().GetValue() {
			st.announceCompression(ctx)
		}
	}
	if err := echoMetadata(ctx, nil); err != nil {
		return err
	}
	if err := respond(ctx, stream, req.GetResponseParameters()); err != nil {
		return err
	}
	if err := echoStatus(req.GetResponseStatus()); err != nil {
		return err
	}
	return richStatusIfAsked(ctx)
}

func (t *testService) StreamingInputCall(stream pb.TestService_StreamingInputCallServer) error {
	ctx := stream.Context()
	st := stateFrom(ctx)
	if err := echoMetadata(ctx, nil); err != nil {
		return err
	}
	var total int
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if req.GetExpectCompressed().GetValue() && !st.lastCompressed {
			return status.Error(codes.InvalidArgument, "expected a compressed request message")
		}
		total += len(req.GetPayload().GetBody())
	}
	return stream.SendAndClose(&pb.StreamingInputCallResponse{AggregatedPayloadSize: int32(total)})
}

func (t *testService) FullDuplexCall(stream pb.TestService_FullDuplexCallServer) error {
	ctx := stream.Context()
	if err := echoMetadata(ctx, nil); err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := echoStatus(req.GetResponseStatus()); err != nil {
			return err
		}
		if err := respond(ctx, stream, req.GetResponseParameters()); err != nil {
			return err
		}
	}
}

func (t *testService) HalfDuplexCall(stream pb.TestService_HalfDuplexCallServer) error {
	ctx := stream.Context()
	if err := echoMetadata(ctx, nil); err != nil {
		return err
	}
	var requests []*pb.StreamingOutputCallRequest
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		requests = append(requests, req)
	}
	for _, req := range requests {
		if err := echoStatus(req.GetResponseStatus()); err != nil {
			return err
		}
		if err := respond(ctx, stream, req.GetResponseParameters()); err != nil {
			return err
		}
	}
	return nil
}

func (t *testService) UnimplementedCall(context.Context, *pb.Empty) (*pb.Empty, error) {
	return nil, status.Error(codes.Unimplemented, "UnimplementedCall is not implemented")
}

// respond sends one response per parameters: after its interval, compressed as it asks.
func respond(ctx context.Context, stream grpc.ServerStream, parameters []*pb.ResponseParameters) error {
	st := stateFrom(ctx)
	for _, p := range parameters {
		if us := p.GetIntervalUs(); us > 0 {
			if err := sleep(ctx, time.Duration(us)*time.Microsecond); err != nil {
				return err
			}
		}
		body, err := payload(p.GetSize())
		if err != nil {
			return err
		}
		st.setResponseCompression(ctx, p.GetCompressed())
		if err := stream.SendMsg(&pb.StreamingOutputCallResponse{Payload: body}); err != nil {
			return err
		}
	}
	return nil
}

// echoMetadata sends x-grpc-test-echo-initial and the user agent (if x-grpc-test-echo-useragent
// asks for it) in the response headers, with extra, and sets x-grpc-test-echo-trailing-bin as
// a trailer. The headers leave at once when there is something to echo, as the grpcio server's
// do; otherwise extra waits for the first response.
func echoMetadata(ctx context.Context, extra metadata.MD) error {
	md, _ := metadata.FromIncomingContext(ctx)
	header := metadata.MD{}
	if values := md.Get(echoInitialKey); len(values) > 0 {
		header.Append(echoInitialKey, values...)
	}
	if len(md.Get(echoUserAgentKey)) > 0 {
		header.Append(echoUserAgentKey, md.Get("user-agent")...)
	}
	if values := md.Get(echoTrailingKey); len(values) > 0 {
		if err := grpc.SetTrailer(ctx, metadata.MD{echoTrailingKey: values}); err != nil {
			return err
		}
	}
	if header.Len() == 0 {
		if extra.Len() > 0 {
			return grpc.SetHeader(ctx, extra)
		}
		return nil
	}
	header = metadata.Join(header, extra)
	stateFrom(ctx).headerSent = true
	return grpc.SendHeader(ctx, header)
}

// echoStatus is the status a request's response_status asks for, nil for none or OK.
func echoStatus(s *pb.EchoStatus) error {
	if s.GetCode() == 0 {
		return nil
	}
	return status.Error(codes.Code(s.GetCode()), s.GetMessage())
}

func payload(size int32) (*pb.Payload, error) {
	if size < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "negative response size %d", size)
	}
	return &pb.Payload{Type: pb.PayloadType_COMPRESSABLE, Body: make([]byte, size)}, nil
}

// sleep waits d, or until the RPC is cancelled or its deadline passes (then it returns the
// status for that).
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}
