package criproxy

import "fmt"

// frame is one gRPC message as it came off the wire: the proxy never decodes it.
type frame struct{ payload []byte }

// rawCodec passes frames through unchanged, so the proxy needs no CRI types and forwards
// every field of every version of the API as it is.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" } // what the peers negotiate: content-type application/grpc+proto

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("criproxy: cannot marshal %T", v)
	}
	return f.payload, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("criproxy: cannot unmarshal into %T", v)
	}
	// gRPC may reuse data's buffer once Unmarshal returns.
	f.payload = append(f.payload[:0], data...)
	return nil
}
