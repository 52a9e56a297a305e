package main

import (
	"context"

	"github.com/golang/protobuf/ptypes/duration"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// richStatusKey is the request metadata of grpc-calls' own interop case rich_error_details: the
// call fails, after the responses it asked for, with richStatus.
const richStatusKey = "x-grpc-calls-rich-status"

// richStatus is a google.rpc.Status with typed details (grpc-calls' RichErrorCase.status).
func richStatus() error {
	st, err := status.New(codes.ResourceExhausted, "out of stock").WithDetails(
		&errdetails.ErrorInfo{Reason: "STOCKOUT", Domain: "example.com", Metadata: map[string]string{"sku": "42"}},
		&errdetails.RetryInfo{RetryDelay: &duration.Duration{Seconds: 2}},
	)
	if err != nil {
		return status.Errorf(codes.Internal, "building the rich status: %v", err)
	}
	return st.Err()
}

// richStatusIfAsked is richStatus when the request's metadata asks for it, nil otherwise.
func richStatusIfAsked(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if len(md.Get(richStatusKey)) == 0 {
		return nil
	}
	return richStatus()
}
