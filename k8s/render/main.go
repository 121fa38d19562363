// helm-render: renders a Helm chart offline the way `helm template` does, for CI on machines
// without helm. It uses Go's text/template with the sprig function library (both from
// Debian's packages, built in GOPATH mode with no network) plus Helm's own template
// functions: include, tpl, required, fail, toYaml, fromYaml, toJson, lookup (always empty).
//
//	helm-render [-f values.yaml]... [--set a.b=c]... [--name RELEASE] [--namespace NS] CHART_DIR
//
// Output: every rendered manifest, each preceded by "---" and a "# Source:" comment, like helm.
// Values are merged like helm's (maps deep-merged, later files win, --set last); the values
// schema is checked by the tests (test/src/e2e/k8s-manifests.test.ts), not here.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type values = map[string]interface{}

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "helm-render: "+format+"\n", a...)
	os.Exit(1)
}

func readYAML(file string) values {
	data, err := os.ReadFile(file)
	if err != nil {
		die("%v", err)
	}
	out := values{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		die("%s: %v", file, err)
	}
	return normalize(out).(values)
}

// normalize gives values the types helm's JSON round trip gives them.
func normalize(v interface{}) interface{} {
	b, err := json.Marshal(v)
	if err != nil {
		die("values are not JSON-compatible: %v", err)
	}
	var out interface{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		die("%v", err)
	}
	return numbers(out)
}

func numbers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			t[k] = numbers(x)
		}
	case []interface{}:
		for i, x := range t {
			t[i] = numbers(x)
		}
	case json.Number:
		// helm's values are JSON-typed: every number is a float64 (so 1000000 prints as
		// 1e+06 unless a template converts it, as with helm itself).
		f, _ := t.Float64()
		return f
	}
	return v
}

// merge deep-merges src into dst (src wins); a null in src deletes the key, as in helm.
func merge(dst, src values) values {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, ok := v.(values); ok {
			if dm, ok := dst[k].(values); ok {
				dst[k] = merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// setValue applies one --set a.b.c=value (value parsed as a YAML scalar; no list syntax).
func setValue(root values, expr string) {
	eq := strings.Index(expr, "=")
	if eq < 0 {
		die("--set %q: expected key=value", expr)
	}
	keys := strings.Split(expr[:eq], ".")
	var v interface{}
	raw := expr[eq+1:]
	if err := yaml.Unmarshal([]byte(raw), &v); err != nil || v == nil {
		v = raw
	}
	if raw == "" {
		v = ""
	}
	cur := root
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(values)
		if !ok {
			next = values{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = normalize(v)
}

func toYAML(v interface{}) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

type files struct{ root string }

// Get returns a chart file's content ("" when missing), like helm's .Files.Get.
func (f files) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(f.root, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// Glob returns the chart files matching a pattern, name → content.
func (f files) Glob(pattern string) map[string]string {
	out := map[string]string{}
	matches, _ := filepath.Glob(filepath.Join(f.root, pattern))
	for _, m := range matches {
		rel, _ := filepath.Rel(f.root, m)
		out[rel] = f.Get(rel)
	}
	return out
}

func main() {
	var valueFiles, sets listFlag
	flag.Var(&valueFiles, "f", "values file (repeatable)")
	flag.Var(&sets, "set", "key=value (repeatable)")
	name := flag.String("name", "zc", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	kubeVersion := flag.String("kube-version", "1.30.0", "Kubernetes version for .Capabilities")
	flag.Parse()
	if flag.NArg() != 1 {
		die("usage: helm-render [-f values.yaml]... [--set k=v]... [--name R] CHART_DIR")
	}
	chartDir := flag.Arg(0)

	chartMeta := readYAML(filepath.Join(chartDir, "Chart.yaml"))
	vals := readYAML(filepath.Join(chartDir, "values.yaml"))
	for _, f := range valueFiles {
		vals = merge(vals, readYAML(f))
	}
	for _, s := range sets {
		setValue(vals, s)
	}

	chart := map[string]interface{}{}
	for k, v := range chartMeta {
		chart[strings.ToUpper(k[:1])+k[1:]] = v
	}
	kv := strings.SplitN(*kubeVersion, ".", 3)
	top := map[string]interface{}{
		"Values":  vals,
		"Chart":   chart,
		"Release": map[string]interface{}{"Name": *name, "Namespace": *namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
		"Capabilities": map[string]interface{}{
			"KubeVersion": map[string]interface{}{"Version": "v" + *kubeVersion, "GitVersion": "v" + *kubeVersion, "Major": kv[0], "Minor": kv[1]},
			"APIVersions": apiVersions{},
		},
		"Files": files{root: chartDir},
	}

	tpl := template.New("chart").Option("missingkey=zero")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		out := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &out); err != nil {
			out["Error"] = err.Error()
		}
		return normalize(out).(values)
	}
	funcs["toJson"] = func(v interface{}) string { b, _ := json.Marshal(v); return string(b) }
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return nil, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["fail"] = func(msg string) (string, error) { return "", fmt.Errorf("%s", msg) }
	funcs["lookup"] = func(...interface{}) map[string]interface{} { return map[string]interface{}{} }
	funcs["include"] = func(string, interface{}) (string, error) { return "", nil }
	funcs["tpl"] = func(string, interface{}) (string, error) { return "", nil }
	tpl.Funcs(funcs)
	// include and tpl need the parsed template set, so they are bound after parsing.
	includeDepth := 0
	tpl.Funcs(template.FuncMap{
		"include": func(n string, data interface{}) (string, error) {
			includeDepth++
			defer func() { includeDepth-- }()
			if includeDepth > 100 {
				return "", fmt.Errorf("include %q: too deep", n)
			}
			var buf bytes.Buffer
			if err := tpl.ExecuteTemplate(&buf, n, data); err != nil {
				return "", err
			}
			return buf.String(), nil
		},
		"tpl": func(text string, data interface{}) (string, error) {
			t, err := tpl.Clone()
			if err != nil {
				return "", err
			}
			t, err = t.New("tpl").Parse(text)
			if err != nil {
				return "", err
			}
			var buf bytes.Buffer
			if err := t.Execute(&buf, data); err != nil {
				return "", err
			}
			return buf.String(), nil
		},
	})

	chartName, _ := chartMeta["name"].(string)
	var names []string
	err := filepath.Walk(filepath.Join(chartDir, "templates"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chartDir, p)
		name := path.Join(chartName, filepath.ToSlash(rel))
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := tpl.New(name).Parse(string(src)); err != nil {
			return err
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		die("%v", err)
	}
	sort.Strings(names)

	var out strings.Builder
	for _, n := range names {
		base := path.Base(n)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" || !(strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".tpl")) {
			continue
		}
		data := map[string]interface{}{}
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": n, "BasePath": path.Join(chartName, "templates")}
		var buf bytes.Buffer
		if err := tpl.ExecuteTemplate(&buf, n, data); err != nil {
			die("%v", err)
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		for _, doc := range splitDocs(text) {
			out.WriteString("---\n# Source: " + n + "\n" + doc + "\n")
		}
	}
	fmt.Print(out.String())
}

// splitDocs splits a rendered file at its "---" lines and drops documents with no content.
func splitDocs(text string) []string {
	var docs []string
	for _, d := range strings.Split("\n"+text, "\n---") {
		trimmed := strings.TrimSpace(d)
		empty := true
		for _, line := range strings.Split(trimmed, "\n") {
			l := strings.TrimSpace(line)
			if l != "" && !strings.HasPrefix(l, "#") {
				empty = false
				break
			}
		}
		if !empty {
			docs = append(docs, strings.Trim(d, "\n"))
		}
	}
	return docs
}

// apiVersions answers .Capabilities.APIVersions.Has; CRD-backed APIs count as present only
// when listed in HELM_RENDER_API_VERSIONS (comma-separated), as with helm's --api-versions.
type apiVersions struct{}

func (apiVersions) Has(v string) bool {
	if strings.Count(v, "/") == 0 || strings.HasSuffix(strings.SplitN(v, "/", 2)[0], ".k8s.io") || v == "apps/v1" || v == "batch/v1" || v == "policy/v1" || strings.HasPrefix(v, "autoscaling/") {
		return true
	}
	for _, x := range strings.Split(os.Getenv("HELM_RENDER_API_VERSIONS"), ",") {
		if x == v {
			return true
		}
	}
	return false
}
