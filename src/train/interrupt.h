// SIGINT/SIGTERM handling for long runs: the handler only sets a flag; the training loop checks
// it after each step, saves a checkpoint and exits with kExitInterrupted (130). A second signal
// while the first is being handled restores the default action, so Ctrl-C twice still kills.
#pragma once

namespace tisa::train {

// Installs the handlers (idempotent) and clears the flag.
void install_interrupt_handlers();
// Restores the previous handlers.
void remove_interrupt_handlers();
// True once SIGINT or SIGTERM was received (or request_interrupt() was called).
bool interrupt_requested();
// Sets the flag as a signal would (tests, and callers that stop a run programmatically).
void request_interrupt();
void clear_interrupt();

}  // namespace tisa::train
