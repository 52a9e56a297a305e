package main

import (
	"context"
	"strings"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// setHealthKey is request metadata SERVICE=STATUS (SERVING, NOT_SERVING, UNKNOWN): the server
// sets that health status before it handles the call, so tests can flip statuses.
const setHealthKey = "x-grpc-calls-set-health"

// applySetHealth sets the statuses a call's metadata asks for.
func applySetHealth(ctx context.Context, server *health.Server) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok || server == nil {
		return
	}
	for _, value := range md.Get(setHealthKey) {
		service, status, found := strings.Cut(value, "=")
		if !found {
			continue
		}
		if code, known := healthpb.HealthCheckResponse_ServingStatus_value[status]; known {
			server.SetServingStatus(service, healthpb.HealthCheckResponse_ServingStatus(code))
		}
	}
}
