package otlp

// The names used more than once; docs/telemetry.md lists them all, following
// OpenTelemetry's semantic conventions where one applies, stopgate.* otherwise.
const (
	attrServiceName = "service.name"
	attrClient      = "stopgate.client.name"
	attrEvent       = "stopgate.event"
	attrVerdict     = "stopgate.verdict"
	attrCause       = "stopgate.reason.kind"
	attrPrompts     = "stopgate.prompts"
	attrValidator   = "stopgate.validator.name"
	attrKind        = "stopgate.validator.kind"
	attrResult      = "stopgate.validator.result"
	scopeName       = "github.com/stopgate/stopgate/internal/telemetry"
)
