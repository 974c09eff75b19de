package main

import (
	"reflect"
	"testing"
)

func TestParseModules(t *testing.T) {
	out := "example.com/user \ngolang.org/x/net v0.57.0\n\tgolang.org/x/text v0.40.0 \n\n"
	want := map[string]string{"golang.org/x/net": "v0.57.0", "golang.org/x/text": "v0.40.0"}
	if got := parseModules(out); !reflect.DeepEqual(got, want) {
		t.Errorf("parseModules(%q) = %v, want %v", out, got, want)
	}
}

func TestMoved(t *testing.T) {
	before := map[string]string{
		"golang.org/x/net":            "v0.57.0",
		"golang.org/x/text":           "v0.40.0",
		"github.com/stretchr/testify": "v1.8.4",
		"golang.org/x/sys":            "v0.47.0",
	}
	for _, tc := range []struct {
		name       string
		after      map[string]string
		moved, add []string
	}{
		{"nothing moves", map[string]string{
			"golang.org/x/net": "v0.57.0", "golang.org/x/text": "v0.40.0",
			"github.com/stretchr/testify": "v1.8.4", "golang.org/x/sys": "v0.47.0",
			"go.uber.org/goleak": "v1.2.0", "github.com/teebody/teebody": "v0.1.0",
		}, nil, []string{"github.com/teebody/teebody@v0.1.0", "go.uber.org/goleak@v1.2.0"}},
		{"the issue's bump", map[string]string{
			"golang.org/x/net": "v0.62.0", "golang.org/x/text": "v0.43.0",
			"github.com/stretchr/testify": "v1.12.1", "golang.org/x/sys": "v0.47.0",
			"github.com/teebody/teebody": "v0.1.0",
		}, []string{
			"github.com/stretchr/testify: v1.8.4 -> v1.12.1",
			"golang.org/x/net: v0.57.0 -> v0.62.0",
			"golang.org/x/text: v0.40.0 -> v0.43.0",
		}, []string{"github.com/teebody/teebody@v0.1.0"}},
		{"a module gone", map[string]string{
			"golang.org/x/net": "v0.57.0", "golang.org/x/text": "v0.40.0", "github.com/stretchr/testify": "v1.8.4",
		}, []string{"golang.org/x/sys: v0.47.0 -> gone"}, nil},
	} {
		if got := moved(before, tc.after); !reflect.DeepEqual(got, tc.moved) {
			t.Errorf("%s: moved = %q, want %q", tc.name, got, tc.moved)
		}
		if got := added(before, tc.after); !reflect.DeepEqual(got, tc.add) {
			t.Errorf("%s: added = %q, want %q", tc.name, got, tc.add)
		}
	}
}
