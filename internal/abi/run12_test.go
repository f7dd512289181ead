package abi

// The goldens of ABI 1.2's running extension (run12.go), added to the
// round trip of every golden (abi_test.go).
func init() {
	for name, rt := range map[string]roundTrip{
		"init.v12run.response.json":                  answer[InitResult](),
		"host.flags.get.response.json":               answer[FlagsGetResult](),
		"host.tools.list.response.json":              answer[ToolsListResult](),
		"host.tools.setActive.request.json":          request[ToolNamesParams](HostMethodToolsSetActive),
		"host.tools.register.request.json":           request[ToolsRegisterParams](HostMethodToolsRegister),
		"host.model.get.response.json":               answer[ModelGetResult](),
		"host.model.list.response.json":              answer[ModelListResult](),
		"host.model.set.request.json":                request[ModelSetParams](HostMethodModelSet),
		"host.model.setThinkingLevel.request.json":   request[ThinkingLevelParams](HostMethodModelSetThinkingLevel),
		"host.model.setThinkingLevel.response.json":  answer[ThinkingLevelParams](),
		"host.llm.complete.request.json":             request[LLMCompleteParams](HostMethodLLMComplete),
		"host.llm.complete.response.json":            answer[LLMCompleteResult](),
		"host.timer.set.request.json":                request[TimerSetParams](HostMethodTimerSet),
		"host.timer.set.response.json":               answer[IDResult](),
		"host.timer.clear.request.json":              request[IDParams](HostMethodTimerClear),
		"host.watch.add.request.json":                request[WatchAddParams](HostMethodWatchAdd),
		"host.bus.emit.request.json":                 request[BusEmitParams](HostMethodBusEmit),
		"timer.fire.request.json":                    request[IDParams](MethodTimerFire),
		"watch.fire.request.json":                    request[WatchFireParams](MethodWatchFire),
		"bus.message.request.json":                   request[BusMessageParams](MethodBusMessage),
		"hook.before_provider_request.request.json":  request[ProviderRequestParams](MethodBeforeProviderRequest),
		"hook.before_provider_request.response.json": answer[ProviderRequestParams](),
		"event.model_select.request.json":            request[ModelSelectEvent](MethodEvent),
	} {
		goldens[name] = rt
	}
}
