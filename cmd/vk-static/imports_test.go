package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every megabyte of linked code is resident memory of every agent (issue 14, issue 28), so the
// packages below are kept out of the agent's binary: each a path or, ending in "/", a tree.

// heavyAuthPackages are what k8s.io/apiserver's authenticator and authorizer factories bring in
// — the webhook plugins, CEL and its parser, the API server's configuration API — which
// node/api does without (its authenticator and authorizer are its own), and the apiserver's x509
// authenticator, whose histogram links component-base metrics and OpenTelemetry
// (node/api/clientcert instead).
var heavyAuthPackages = []string{
	"github.com/google/cel-go/",
	"github.com/antlr4-go/antlr/",
	"k8s.io/apiserver/plugin/",
	"k8s.io/apiserver/pkg/util/webhook",
	"k8s.io/apiserver/pkg/cel/",
	"k8s.io/apiserver/pkg/apis/apiserver/",
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory",
	"k8s.io/apiserver/pkg/authorization/authorizerfactory",
	"k8s.io/apiserver/pkg/authentication/request/x509",
}

// telemetryPackages are component-base's metrics and OpenTelemetry, which the agent does not
// use: component-base's feature gates link both, and they came with packages that only carry
// a feature gate along (k8s.io/kubelet/config/v1beta1's logging and tracing types, the API
// server's request context), with the apiserver's x509 authenticator and with cri-client's
// gRPC instrumentation.
var telemetryPackages = []string{
	"go.opentelemetry.io/",
	"k8s.io/component-base/metrics/",
	"k8s.io/component-base/featuregate",
}

// fullClientsetPackages are client-go's full clientset and what imports it or its scheme,
// which registers all 54 API groups (about 5 MB of the agent's resident binary): the agent's
// client is kubeclient, over the five groups it calls (issue 28).
var fullClientsetPackages = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/kubernetes/",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/informers/",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/applyconfigurations/",
	"k8s.io/client-go/tools/events",
	"k8s.io/client-go/util/certificate",
	"k8s.io/client-go/util/certificate/",
	"k8s.io/apiserver/pkg/server/dynamiccertificates",
}

// unusedAPIGroups are the API groups the agent does not call: every k8s.io/api package but
// core/v1, coordination/v1, authentication/v1, authorization/v1 and certificates/v1.
func unusedAPIGroups(t *testing.T) []string {
	t.Helper()
	used := map[string]bool{"core/v1": true, "coordination/v1": true, "authentication/v1": true,
		"authorization/v1": true, "certificates/v1": true, "node/v1": true}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the API groups: %v", err)
	}
	out, err := exec.Command(goTool, "list", "k8s.io/api/...").Output()
	require.NoError(t, err, "go list k8s.io/api/...")
	var unused []string
	for line := range strings.Lines(string(out)) {
		pkg := strings.TrimSpace(line)
		if group := strings.TrimPrefix(pkg, "k8s.io/api/"); group != pkg && !used[group] && strings.Count(group, "/") == 1 {
			unused = append(unused, pkg)
		}
	}
	require.NotEmpty(t, unused)
	return unused
}

// TestAgentLinksNoFullClientset: the agent talks to the API server through kubeclient, and
// links only the API groups it calls.
func TestAgentLinksNoFullClientset(t *testing.T) {
	assertNotLinked(t, append(fullClientsetPackages, unusedAPIGroups(t)...),
		"use kubeclient.Interface (or an interface of the methods needed, with client-go's typed signatures) and keep client-go's typed clients, scheme, informers and certificate manager out")
}

// TestAgentLinksNoHeavyAuth: a TokenReview and a SubjectAccessReview are all the kubelet API's
// authentication and authorization need (issue 14: the factories grew the binary from 77 to
// 88 MB).
func TestAgentLinksNoHeavyAuth(t *testing.T) {
	assertNotLinked(t, heavyAuthPackages,
		"authenticate and authorize with node/api's own TokenReview and SubjectAccessReview code and k8s.io/apiserver's light request packages instead")
}

// TestAgentLinksNoTelemetry: the agent serves its metrics with the Prometheus client alone.
func TestAgentLinksNoTelemetry(t *testing.T) {
	assertNotLinked(t, telemetryPackages,
		"find the import chain with go list -deps -f '{{.ImportPath}}: {{join .Imports \" \"}}' ./cmd/vk-static and replace the import that brings it (a local type, a context key of our own, a narrower package)")
}

// assertNotLinked fails for every package of the agent that forbidden names, saying which of
// the agent's packages import it and what to do instead.
func assertNotLinked(t *testing.T, forbidden []string, instead string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the agent's packages: %v", err)
	}
	const agent = "github.com/vk-static/vk-static/cmd/vk-static"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", agent).Output()
	require.NoError(t, err, "go list -deps %s", agent)
	importers := map[string][]string{} // package → the agent's packages importing it
	var deps []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		deps = append(deps, fields[0])
		for _, imported := range fields[1:] {
			importers[imported] = append(importers[imported], fields[0])
		}
	}
	require.Contains(t, deps, "github.com/vk-static/vk-static/node/api")
	for _, pkg := range deps {
		for _, f := range forbidden {
			if pkg == strings.TrimSuffix(f, "/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(pkg, f)) {
				assert.Fail(t, "the agent links a package it must not",
					"%s (imported by %v): each MB of linked code is resident memory of every agent; %s", pkg, importers[pkg], instead)
			}
		}
	}
}
