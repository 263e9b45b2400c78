import type { Logger } from '../contracts/logger.js';
import { noopAgentObserver, noopTurnObserver, type Observer } from '../contracts/observer.js';

/** Methods whose result is itself an observer: guarded too, or a no-op stand-in when the call throws. */
const nestedObservers = new Map<PropertyKey, object>([
  ['startTurn', noopTurnObserver],
  ['agent', noopAgentObserver],
]);

/** Wraps every observer method so a failing tracer is logged and otherwise ignored: replies never wait on it. */
function guardMethods<T extends object>(target: T, logger: Logger): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      const fallback = nestedObservers.get(property);
      return (...args: unknown[]) => {
        try {
          const result = value.apply(object, args);
          if (result instanceof Promise) {
            return result.catch((error: unknown) =>
              logger.warn({ err: error, observer: String(property) }, 'observer failed'),
            );
          }
          return fallback ? guardMethods(result as object, logger) : result;
        } catch (error) {
          logger.warn({ err: error, observer: String(property) }, 'observer failed');
          return fallback ? guardMethods(fallback, logger) : undefined;
        }
      };
    },
  });
}

export function guardObserver(observer: Observer, logger: Logger): Observer {
  return guardMethods(observer, logger);
}
