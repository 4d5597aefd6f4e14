// Package nodeobjects is what a node may read of the cluster with its own identity
// (system:node:<name>, under the Node authorizer): the config maps and secrets of the pods bound
// to it, every namespace's Services, service account tokens bound to its pods, and the
// RuntimeClasses whose handler a pod's sandbox runs with. Each is an interface with an
// implementation over a kubeclient.Interface, so that the agent builds them once from its
// client (agent.ProviderConfig) and the lifecycle layer and its env and volume packages, which
// use them, need no client of their own. Static pods never reference config maps, secrets or
// tokens (the sources refuse such manifests): standalone, without an API server, the getters
// are nil, and every sandbox has the runtime's default handler, as a standalone kubelet's.
//
// Smallest use, given a client (kubeclient.New) carrying the node's identity:
//
//	objects := nodeobjects.NewClientGetter(client)
//	cm, err := objects.GetConfigMap(ctx, "shop", "cfg") // apierrors.IsNotFound when missing
//	tokens := nodeobjects.NewClientTokenRequester(client)
//	rc, err := nodeobjects.NewClientRuntimeClassGetter(client).GetRuntimeClass(ctx, "kata") // rc.Handler
//	services := nodeobjects.NewServiceWatch(client)
//	go services.Run(ctx) // until ctx ends; services.List() once services.HasSynced()
package nodeobjects
