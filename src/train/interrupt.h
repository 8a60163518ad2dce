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

// The handlers for the lifetime of one run (RAII: an exception unwinding the run removes them
// too). `on` false only clears the flag (tests, embedded use).
class InterruptScope {
 public:
  explicit InterruptScope(bool on) : on_(on) {
    clear_interrupt();
    if (on_) install_interrupt_handlers();
  }
  ~InterruptScope() {
    if (on_) remove_interrupt_handlers();
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  bool on_;
};

}  // namespace tisa::train
