// Signal flag for graceful stops; see interrupt.h.
#include "train/interrupt.h"

#include <csignal>

namespace tisa::train {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
bool g_installed = false;
struct sigaction g_old_int, g_old_term;

extern "C" void on_signal(int signo) {
  if (g_interrupted) {
    // Second signal: give the user the default behaviour (terminate now).
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  g_interrupted = 1;
}

}  // namespace

void install_interrupt_handlers() {
  g_interrupted = 0;
  if (g_installed) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  g_installed = true;
}

void remove_interrupt_handlers() {
  if (!g_installed) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed = false;
}

bool interrupt_requested() { return g_interrupted != 0; }
void request_interrupt() { g_interrupted = 1; }
void clear_interrupt() { g_interrupted = 0; }

}  // namespace tisa::train
