// Package v1beta1 is the kubelet's KubeletConfiguration (kubelet.config.k8s.io/v1beta1) as the
// agent's --config reads it and /configz writes it: k8s.io/kubelet/config/v1beta1's type, every
// field under the same name, JSON key and Go type, but only the fields vk-static uses typed. The
// others are json.RawMessage: accepted as the kubelet accepts them (so that a kubelet's config
// file works as is, its unused fields logged by the caller), not checked further.
//
// Why a copy: upstream's type carries component-base's logging and tracing configuration, whose
// packages link component-base's feature gates and through them component-base metrics and
// OpenTelemetry — several MB of the agent's binary and resident memory for two fields it never
// reads (issue 28). The package's name and its types' names are upstream's, so a strict decode
// (sigs.k8s.io/yaml.UnmarshalStrict) fails with upstream's messages, "json: unknown field …",
// "cannot unmarshal string into Go struct field KubeletConfiguration.port of type int32";
// TestSameAsUpstream keeps the copy in step with the k8s.io/kubelet module in go.mod.
package v1beta1
