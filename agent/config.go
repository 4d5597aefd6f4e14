package agent

import (
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/sources"
)

// Config is everything New needs. NodeName and Provider are required; every other field has a
// working zero value (the defaults of the package that uses it).
type Config struct {
	// NodeName is the node's name; with a Client it must match the client's identity
	// (system:node:<NodeName>), or NodeRestriction refuses every write.
	NodeName string
	// Provider runs the pods. If it also implements node.PodNotifier it pushes status (else it
	// is polled), node.NodeProvider reports node health, and NodeConfigurer fills in the Node.
	Provider node.PodLifecycleHandler

	// Client talks to the API server with the node's identity; nil runs standalone: static pods
	// only, no Node, no mirrors, no events.
	Client kubernetes.Interface
	// EventClient posts events, with a rate limit of its own so that events never use up the
	// status writes' budget (the kubelet's --event-qps); nil means Client.
	EventClient kubernetes.Interface

	// PodManifestPath is a directory of static pod manifests, or one file ("" for none).
	PodManifestPath    string
	FileCheckFrequency time.Duration // default sources.DefaultFileCheckFrequency
	// ManifestURL serves static pod manifests, polled with ManifestURLHeader ("" for none).
	ManifestURL        string
	ManifestURLHeader  http.Header
	HTTPCheckFrequency time.Duration // default sources.DefaultHTTPCheckFrequency
	// Sources are added to the file, URL and API sources: a library user's own.
	Sources []sources.Source

	// Node is the Node to register (name, labels, taints, addresses, capacity); nil means
	// NewNode(NodeName, "", nil) — see NewNode. Its name is set to NodeName.
	Node                      *corev1.Node
	NodeStatusUpdateFrequency time.Duration // default node.DefaultStatusUpdateInterval
	NodeLeaseDurationSeconds  int32         // default node.DefaultLeaseDurationSeconds

	PodSyncWorkers int           // default node.DefaultPodSyncWorkers
	SyncFrequency  time.Duration // default node.DefaultSyncFrequency

	// Registerer receives the agent's Prometheus metrics; nil registers them nowhere.
	Registerer prometheus.Registerer
}

// NodeConfigurer is implemented by providers that fill in the Node they run on (capacity,
// allocatable, addresses, a taint that keeps real workloads off a simulator).
type NodeConfigurer interface {
	ConfigureNode(*corev1.Node)
}

func (c *Config) validate() error {
	switch {
	case c.NodeName == "":
		return errors.New("agent: Config.NodeName is required")
	case c.Provider == nil:
		return errors.New("agent: Config.Provider is required")
	}
	return nil
}
