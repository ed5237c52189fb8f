// Polling that rests while the tab is hidden: poll(fn, ms) calls fn now and then every ms
// (after the previous call finished) while document.visibilityState is 'visible', and at once
// when the tab becomes visible again.  fn may return false to stop.  Returns stop().
export function poll(fn, ms) {
  let timer = null, stopped = false, running = false;

  async function tick() {
    timer = null;
    if (stopped || running) return;
    if (document.visibilityState !== 'visible') return; // resumed by the visibility listener
    running = true;
    let again = true;
    try {
      again = (await fn()) !== false;
    } catch (e) {
      console.error(e);
    }
    running = false;
    if (again && !stopped) timer = setTimeout(tick, ms);
    else stop();
  }

  function onVisible() {
    if (document.visibilityState === 'visible' && !timer && !running && !stopped) tick();
  }

  function stop() {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    document.removeEventListener('visibilitychange', onVisible);
  }

  document.addEventListener('visibilitychange', onVisible);
  tick();
  return stop;
}

// A promise that resolves after ms, or at once when signal aborts.
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, {once: true});
  });
}
