import type { Logger } from './logger.js';
import type { Observer, TurnObserver } from './observer.js';

/** Wraps every observer method so a failing tracer is logged and otherwise ignored: replies never wait on it. */
function guardMethods<T extends object>(target: T, logger: Logger): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result = value.apply(object, args);
          if (result instanceof Promise) {
            return result.catch((error: unknown) =>
              logger.warn({ err: error, observer: String(property) }, 'observer failed'),
            );
          }
          if (property === 'startTurn') return guardMethods(result as TurnObserver, logger);
          return result;
        } catch (error) {
          logger.warn({ err: error, observer: String(property) }, 'observer failed');
          return property === 'startTurn' ? guardMethods(noopTurnObserver, logger) : undefined;
        }
      };
    },
  });
}

const noopTurnObserver: TurnObserver = {
  generation: () => {},
  toolCall: () => {},
  approvalRequested: () => {},
  compaction: () => {},
  end: () => {},
};

export function guardObserver(observer: Observer, logger: Logger): Observer {
  return guardMethods(observer, logger);
}
