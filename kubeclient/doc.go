// Package kubeclient is the agent's client for the API server: typed clients for the few
// resources a node reads and writes (pods, nodes, leases, events, config maps, secrets,
// services, service account tokens, token and access reviews, certificate signing requests,
// runtime classes) and nothing else.
//
// It exists because client-go's full clientset (k8s.io/client-go/kubernetes) costs the agent
// about 5 MB of resident binary: any of its typed clients pulls in k8s.io/client-go/kubernetes/scheme,
// which registers all 54 API groups (their types, conversions and apply configurations are
// linked and initialised), while a node calls six: core/v1, coordination/v1,
// authentication/v1, authorization/v1, certificates/v1 and node/v1. This package builds the
// same typed clients with client-go's gentype over REST clients whose codecs come from a scheme
// holding only those six groups.
//
// Each resource interface here has a subset of the method set of client-go's typed interface
// for the resource, with the same signatures, so client-go's typed clients — real or fake —
// satisfy it as they are; kubeclienttest wraps a client-go clientset as an Interface for
// tests.
//
// One difference in what it returns: a watch of pods (in protobuf, as the agent asks) delivers
// them without metadata.managedFields, which nothing in the agent reads and which were about a
// fifth of decoding each pod event's allocations; a get or list keeps them.
package kubeclient
