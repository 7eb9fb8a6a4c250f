package otlp

// The attribute and metric names (docs/telemetry.md). OpenTelemetry's
// semantic conventions where one applies (service.*, session.id, vcs.*,
// process.exit.code, error.type); stopgate.* otherwise.
const (
	attrServiceName    = "service.name"
	attrServiceVersion = "service.version"
	attrRepoName       = "vcs.repository.name"
	attrRepoURL        = "vcs.repository.url.full"
	attrClient         = "stopgate.client.name"
	attrClientVersion  = "stopgate.client.version"

	attrSession   = "session.id"
	attrEvent     = "stopgate.event" // Stop or SubagentStop
	attrScope     = "stopgate.scope" // main, or agent ID
	attrAgent     = "stopgate.agent.id"
	attrVerdict   = "stopgate.verdict" // the logged decision: pass, block, halt, would-block, would-halt
	attrBlocks    = "stopgate.blocks"  // consecutive blocked stops after this one
	attrPrompts   = "stopgate.prompts"
	attrCause     = "stopgate.reason.kind"
	attrFailed    = "stopgate.validators.failed"
	attrReconcile = "stopgate.reconciled.prompts"
	attrErrorType = "error.type"

	attrPrompt    = "stopgate.prompt"
	attrPromptRes = "stopgate.prompt.result" // passed, failed
	attrValidator = "stopgate.validator.name"
	attrKind      = "stopgate.validator.kind"   // run, file
	attrResult    = "stopgate.validator.result" // passed, failed, timed_out, error
	attrOutcome   = "stopgate.validator.outcome"
	attrExitCode  = "process.exit.code"
	attrExpect    = "stopgate.validator.expectation" // what a file or diff check asks, in one line
	attrTimedOut  = "stopgate.validator.timed_out"
	attrConfined  = "stopgate.validator.confined"
	attrReused    = "stopgate.validator.reused" // taken as passed, not run: nothing it depends on changed
	// A judge's, the model and tokens in the GenAI conventions' names.
	attrModel       = "gen_ai.request.model"
	attrInTokens    = "gen_ai.usage.input_tokens"
	attrOutTokens   = "gen_ai.usage.output_tokens"
	attrCost        = "stopgate.judge.cost_usd" // by price_per_mtok; 0 without one
	attrCached      = "stopgate.judge.cached"   // the answer came from the cache: no request
	attrUnavailable = "stopgate.judge.unavailable"

	spanStop      = "stopgate.stop"
	spanValidator = "stopgate.validator"

	metricStops       = "stopgate.stops"
	metricPrompts     = "stopgate.prompt.checks"
	metricRuns        = "stopgate.validator.runs"
	metricDuration    = "stopgate.validator.duration"
	metricHalts       = "stopgate.halts"
	metricWouldBlocks = "stopgate.observe.would_blocks"

	scopeName = "github.com/stopgate/stopgate/internal/telemetry"
)
