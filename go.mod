module github.com/stopgate/stopgate

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/gofrs/flock v0.13.1
	github.com/hashicorp/go-multierror v1.1.1
	github.com/rogpeppe/go-internal v1.16.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/hashicorp/errwrap v1.0.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/tools v0.38.0 // indirect
)
