// Package nodeobjects is what a node may read of the cluster with its own identity
// (system:node:<name>, under the Node authorizer): the config maps and secrets of the pods bound
// to it, every namespace's Services, and service account tokens bound to its pods. Each is an
// interface with an implementation over a kubeclient.Interface, so that the agent builds them
// once from its client (agent.ProviderConfig) and the lifecycle layer's env and volume packages,
// which use them, need no client of their own. Static pods never reference these objects (the
// sources refuse such manifests): standalone, without an API server, the getters are nil.
//
// Smallest use, given a client (kubeclient.New) carrying the node's identity:
//
//	objects := nodeobjects.NewClientGetter(client)
//	cm, err := objects.GetConfigMap(ctx, "shop", "cfg") // apierrors.IsNotFound when missing
//	tokens := nodeobjects.NewClientTokenRequester(client)
//	services := nodeobjects.NewServiceWatch(client)
//	go services.Run(ctx) // until ctx ends; services.List() once services.HasSynced()
package nodeobjects
