import type { ModelRequest, ModelSettings } from '../models/model.js';
import type { ToolSchema } from '../tools/tool.js';
import type { Message } from '../types.js';
import type { RunSignal } from './model-turn.js';

let signalProperty: PropertyDescriptor;

/**
 * The request a model gets when no hook or contextPolicy reshapes it, built in one step.
 * Its own enumerable properties are those of the plain object troupe sent before, in the
 * same order (`signal` last), so reading, spreading or `Object.keys` see the same request;
 * but `signal` is an accessor that creates the run's signal on first read (RunAbort), so a
 * model that never looks at it costs the run no AbortController.
 *
 * The accessor is one shared function (defined once, below): a getter closure per request
 * would give every request its own hidden class, and those maps keep dead runs reachable
 * until a full GC.
 */
export class DirectModelRequest implements ModelRequest {
  readonly runId: string;
  readonly agent: string;
  readonly system: string;
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSchema[];
  readonly settings: ModelSettings;
  readonly responseFormat: ModelRequest['responseFormat'];
  readonly historyLength: number;
  declare readonly signal: AbortSignal;
  readonly #abort: RunSignal;

  constructor(runId: string, agent: string, system: string, messages: readonly Message[], tools: readonly ToolSchema[], settings: ModelSettings, responseFormat: ModelRequest['responseFormat'], historyLength: number, abort: RunSignal) {
    this.runId = runId;
    this.agent = agent;
    this.system = system;
    this.messages = messages;
    this.tools = tools;
    this.settings = settings;
    this.responseFormat = responseFormat;
    this.historyLength = historyLength;
    this.#abort = abort;
    Object.defineProperty(this, 'signal', signalProperty);
  }

  static {
    signalProperty = {
      get(this: DirectModelRequest): AbortSignal {
        return this.#abort.signal;
      },
      enumerable: true,
      configurable: false,
    };
  }
}
