package agent

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/sources"
)

// Config is everything New needs. NodeName and NewProvider are required; every other field has
// a working zero value (the defaults of the package that uses it).
type Config struct {
	// NodeName is the node's name; with a Client it must match the client's identity
	// (system:node:<NodeName>), or NodeRestriction refuses every write.
	NodeName string
	// NewProvider builds the provider that runs the pods (see Provider), from what the agent
	// gives it (ProviderConfig): lifecycle.NewProvider for a lifecycle.Runtime.
	NewProvider NewProviderFunc

	// Client talks to the API server with the node's identity; nil runs standalone: static pods
	// only, no Node, no mirrors, no events.
	Client kubeclient.Interface
	// EventClient posts events, with a rate limit of its own so that events never use up the
	// status writes' budget (the kubelet's --event-qps); nil means Client.
	EventClient kubeclient.Interface
	// HeartbeatClient renews the Node's Lease and writes its status, as the kubelet's heartbeat
	// client does: with no client-side rate limit, or one no other traffic shares, so that
	// nothing else the agent does can hold the heartbeat back until the node is NotReady; nil
	// means Client.
	HeartbeatClient kubeclient.Interface
	// ReviewClient makes the kubelet API's TokenReviews and SubjectAccessReviews, with a rate
	// limit of its own: anyone who reaches the port can make it review (a made-up bearer token
	// needs no credential, and each is a cache miss), and must use up no other traffic's
	// budget; nil means Client.
	ReviewClient kubeclient.Interface

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
	NodeStatusReportFrequency time.Duration // default node.DefaultStatusReportFrequency
	NodeLeaseDurationSeconds  int32         // default node.DefaultLeaseDurationSeconds
	// NodeStatusMaxImages caps the images the Node lists, when the provider lists them
	// (provider.NodeImageLister): -1 for all, 0 for none; nil means
	// node.DefaultNodeStatusMaxImages.
	NodeStatusMaxImages *int32

	PodSyncWorkers int           // default node.DefaultPodSyncWorkers
	SyncFrequency  time.Duration // default node.DefaultSyncFrequency

	// Registerer receives the agent's Prometheus metrics; nil registers them nowhere.
	Registerer prometheus.Registerer

	// API serves the kubelet HTTP API (node/api) on API.Port, which the Node then advertises
	// (status.daemonEndpoints.kubeletEndpoint) so that the API server proxies kubectl logs,
	// exec and the like to it; nil serves none, and the Node advertises what Node says. The
	// agent sets its NodeName, its review clients from Client when it has none, and adds the
	// Node's addresses to its Hosts.
	API *api.Config
}

func (c *Config) validate() error {
	switch {
	case c.NodeName == "":
		return errors.New("agent: Config.NodeName is required")
	case c.NewProvider == nil:
		return errors.New("agent: Config.NewProvider is required")
	case c.API != nil && (c.API.Port <= 0 || c.API.Port > 65535):
		return fmt.Errorf("agent: Config.API.Port %d: the Node advertises it, so it must be a port (1-65535)", c.API.Port)
	}
	return nil
}
