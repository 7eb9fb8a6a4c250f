package otlp

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/stopgate/stopgate/internal/telemetry"
)

// newResource describes the source: stopgate, the repository, the client.
// The OTEL_* variables win over the table's attributes, and those over the
// defaults (resource.New merges left to right).
func newResource(ctx context.Context, t target, client string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String(attrServiceName, "stopgate")}
	name, remote := repository(t.req.Root)
	if t.req.Config.Repository != "" {
		name = t.req.Config.Repository
	}
	for _, kv := range [][2]string{{"vcs.repository.name", name}, {"vcs.repository.url.full", remote}, {attrClient, client}, {"stopgate.client.version", t.clientVersion}} {
		if kv[1] != "" {
			attrs = append(attrs, attribute.String(kv[0], kv[1]))
		}
	}
	for k, v := range t.req.Config.Resource {
		attrs = append(attrs, attribute.String(k, v))
	}
	return resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithAttributes(envAttributes(t.getenv)...))
}

// envAttributes reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
func envAttributes(getenv func(string) string) []attribute.KeyValue {
	var out []attribute.KeyValue
	pairs, _ := telemetry.Pairs(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	for k, v := range pairs {
		out = append(out, attribute.String(k, v))
	}
	if s := getenv("OTEL_SERVICE_NAME"); s != "" {
		out = append(out, attribute.String(attrServiceName, s))
	}
	return out
}

// repository names the project: its folder's name, and origin's URL from
// .git/config (no git process per stop), without credentials.
func repository(root string) (name, remote string) {
	if root == "" {
		return "", ""
	}
	name = filepath.Base(root)
	f, err := os.Open(filepath.Join(root, ".git", "config"))
	if err != nil {
		return name, ""
	}
	defer f.Close()
	inOrigin := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inOrigin = line == `[remote "origin"]`
			continue
		}
		if k, v, ok := strings.Cut(line, "="); inOrigin && ok && strings.TrimSpace(k) == "url" {
			remote = strings.TrimSpace(v)
			if u, err := url.Parse(remote); err == nil && u.User != nil {
				u.User = nil
				remote = u.String()
			}
			base := strings.TrimSuffix(filepath.Base(strings.TrimSuffix(remote, "/")), ".git")
			if base != "" && base != "." {
				name = base
			}
			return name, remote
		}
	}
	return name, ""
}

// clientVersion is the client's version from the transcript's tail, where
// Claude Code writes it on each line.
func clientVersion(transcript string) string {
	if transcript == "" {
		return ""
	}
	f, err := os.Open(transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	const tail = 64 << 10
	buf := make([]byte, min(st.Size(), tail))
	if _, err := f.ReadAt(buf, st.Size()-int64(len(buf))); err != nil {
		return ""
	}
	m := transcriptVersion.FindAllSubmatch(buf, -1)
	if len(m) == 0 {
		return ""
	}
	return string(m[len(m)-1][1])
}

var transcriptVersion = regexp.MustCompile(`"version":"([0-9][0-9A-Za-z.+-]{0,40})"`)
