package kubeclient

import (
	"context"
	"io"

	"k8s.io/client-go/rest"
)

// MetadataAnswer is the Accept header of a write whose answer nobody reads: the API server
// answers with the written object's metadata only (a meta.k8s.io/v1 PartialObjectMetadata in
// protobuf, about a third of a pod's bytes), not the whole object. The API server converts a
// write's answer as it converts a get's (its handlers' transformResponseObject); an error
// answer, which is never converted, comes as a Status in plain protobuf, the second choice, so
// client-go still turns it into the API error it is (apierrors.IsNotFound and the like).
const MetadataAnswer = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/vnd.kubernetes.protobuf"

// SendDroppingAnswer sends req, a write, asking for its answer as MetadataAnswer, and drops the
// answer unread: Stream, not Do, as Do reads the whole answer into memory first, and the
// answer read to its end so that the connection's stream is done. An error answer is still an
// API error. The agent's status patches, events and DELETEs go this way: the watch brings
// what they wrote back, so their answers are read by nothing (docs/performance.md, "CPU per
// write").
func SendDroppingAnswer(ctx context.Context, req *rest.Request) error {
	body, err := req.SetHeader("Accept", MetadataAnswer).Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(io.Discard, body)
	return err
}
