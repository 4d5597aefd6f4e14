package kubeclient

import (
	"bytes"
	"encoding/binary"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The watches of this package's clients deliver pods without metadata.managedFields: each pod
// event's protobuf bytes lose them before they are decoded (stripPodManagedFields). A pod's
// managedFields are two or three entries of JSON field sets, decoded into strings and byte
// slices on every watch event, and nothing in the agent reads them (the pod source drops them
// at once). Only watches, only pods in protobuf: a get or list of a pod keeps them, JSON is
// left as it is, and other kinds are untouched.

// stripWatchedPods wraps ns so that its protobuf stream serializer — what decodes each watch
// event's envelope (metav1.WatchEvent) — strips managedFields from the pod inside.
func stripWatchedPods(ns runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	infos := append([]runtime.SerializerInfo(nil), ns.SupportedMediaTypes()...)
	for i, info := range infos {
		if info.MediaType != runtime.ContentTypeProtobuf || info.StreamSerializer == nil {
			continue
		}
		stream := *info.StreamSerializer
		stream.Serializer = podStrippingSerializer{stream.Serializer}
		infos[i].StreamSerializer = &stream
	}
	return strippingNegotiatedSerializer{ns, infos}
}

type strippingNegotiatedSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (s strippingNegotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

// podStrippingSerializer decodes a watch event and strips the managedFields of the pod in it.
// The event's object bytes are the decoder's own copy (a RawExtension's Unmarshal copies), so
// they are rewritten in place.
type podStrippingSerializer struct {
	runtime.Serializer
}

func (s podStrippingSerializer) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, actual, err := s.Serializer.Decode(data, gvk, into)
	if ev, ok := obj.(*metav1.WatchEvent); ok && err == nil {
		ev.Object.Raw = stripPodManagedFields(ev.Object.Raw)
	}
	return obj, actual, err
}

// protobufPrefix is the k8s protobuf envelope's magic, before a runtime.Unknown.
var protobufPrefix = []byte{'k', '8', 's', 0}

// Field numbers of the messages on the way to a pod's managedFields.
const (
	unknownTypeMeta = 1  // runtime.Unknown.typeMeta
	unknownRaw      = 2  // runtime.Unknown.raw: the object
	typeMetaVersion = 1  // runtime.TypeMeta.apiVersion
	typeMetaKind    = 2  // runtime.TypeMeta.kind
	objectMetadata  = 1  // Pod.metadata
	managedFields   = 17 // ObjectMeta.managedFields
)

// stripPodManagedFields returns data, an object in the k8s protobuf envelope, without its
// metadata.managedFields if it is a v1 Pod, rewritten in place (the result shares data's
// array and is no longer). Anything else, and anything it cannot parse, is returned as it is,
// untouched: the decoder then decodes (or refuses) it as it would have.
func stripPodManagedFields(data []byte) []byte {
	if !bytes.HasPrefix(data, protobufPrefix) {
		return data
	}
	unknown := data[len(protobufPrefix):]
	if !isV1Pod(unknown) {
		return data
	}
	// Parsed to the end first: nothing is written unless the whole path is well formed and
	// holds something to drop.
	if n, ok := dropNested(unknown, []int{unknownRaw, objectMetadata}, managedFields, false); !ok || n == len(unknown) {
		return data
	}
	n, _ := dropNested(unknown, []int{unknownRaw, objectMetadata}, managedFields, true)
	return data[:len(protobufPrefix)+n]
}

// isV1Pod: the runtime.Unknown in msg names apiVersion v1, kind Pod.
func isV1Pod(msg []byte) bool {
	var typeMeta []byte
	for len(msg) > 0 {
		f, ok := nextField(msg)
		if !ok {
			return false
		}
		if f.num == unknownTypeMeta && f.wire == wireBytes {
			typeMeta = f.content(msg)
		}
		msg = msg[f.size:]
	}
	var version, kind []byte
	for len(typeMeta) > 0 {
		f, ok := nextField(typeMeta)
		if !ok {
			return false
		}
		switch {
		case f.num == typeMetaVersion && f.wire == wireBytes:
			version = f.content(typeMeta)
		case f.num == typeMetaKind && f.wire == wireBytes:
			kind = f.content(typeMeta)
		}
		typeMeta = typeMeta[f.size:]
	}
	return string(version) == "v1" && string(kind) == "Pod"
}

// dropNested removes every field numbered drop from the messages reached from msg through the
// length-delimited fields numbered path (each occurrence), and returns the new length of msg.
// With write false it only parses (ok is false for malformed input) and returns the length the
// rewrite would give; with write true it compacts msg in place: the output never overtakes the
// input, as a field only loses bytes and a length's varint never grows when the length shrinks.
func dropNested(msg []byte, path []int, drop int, write bool) (n int, ok bool) {
	out := 0
	for in := 0; in < len(msg); {
		f, ok := nextField(msg[in:])
		if !ok {
			return 0, false
		}
		switch {
		case len(path) == 0 && f.num == drop:
			// left out
		case len(path) > 0 && f.num == path[0] && f.wire == wireBytes:
			content := msg[in+f.header : in+f.size]
			m, ok := dropNested(content, path[1:], drop, write)
			if !ok {
				return 0, false
			}
			tag := msg[in : in+f.tagLen]
			if write {
				out += copy(msg[out:], tag)
				out += binary.PutUvarint(msg[out:], uint64(m))
				out += copy(msg[out:], content[:m])
			} else {
				out += len(tag) + uvarintLen(uint64(m)) + m
			}
		default:
			if write {
				copy(msg[out:], msg[in:in+f.size])
			}
			out += f.size
		}
		in += f.size
	}
	return out, true
}

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// field is one field's place at the start of a buffer: its tag's length, its header's (tag and,
// for wireBytes, length) and its whole size.
type field struct {
	num, wire            int
	tagLen, header, size int
}

func (f field) content(msg []byte) []byte { return msg[f.header:f.size] }

// nextField parses the field at the start of msg; ok is false if it is malformed, a group or
// runs past msg's end.
func nextField(msg []byte) (f field, ok bool) {
	tag, n := binary.Uvarint(msg)
	if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
		return f, false
	}
	f.num, f.wire, f.tagLen = int(tag>>3), int(tag&7), n
	rest := msg[n:]
	switch f.wire {
	case wireVarint:
		_, m := binary.Uvarint(rest)
		if m <= 0 {
			return f, false
		}
		f.header, f.size = n, n+m
	case wireFixed64:
		f.header, f.size = n, n+8
	case wireFixed32:
		f.header, f.size = n, n+4
	case wireBytes:
		l, m := binary.Uvarint(rest)
		if m <= 0 || l > uint64(len(rest)-m) {
			return f, false
		}
		f.header, f.size = n+m, n+m+int(l)
	default:
		return f, false
	}
	return f, f.size <= len(msg)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
