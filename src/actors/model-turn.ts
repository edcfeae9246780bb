import { fromPromise } from 'xstate';
import { ModelError } from '../errors.js';
import type { Model, ModelRequest } from '../models/model.js';
import type { ToolCallRequest, Usage } from '../types.js';

export interface ModelTurnInput {
  readonly model: Model;
  /** Built when the turn actually starts streaming, so it sees every entry action of the turn. */
  request(): Omit<ModelRequest, 'signal'>;
  onTextDelta(delta: string): void;
  onReasoningDelta(delta: string): void;
}

export interface ModelReply {
  readonly text: string;
  readonly reasoning: string;
  readonly calls: ToolCallRequest[];
  readonly usage: Partial<Usage>;
  readonly finishReason: string | undefined;
}

/** Streams one model reply, forwarding deltas as they arrive. Aborted when the run leaves the model state. */
export async function streamModelTurn(input: ModelTurnInput, signal: AbortSignal): Promise<ModelReply> {
  let text = '';
  let reasoning = '';
  const calls: ToolCallRequest[] = [];
  let usage: Partial<Usage> = {};
  let finishReason: string | undefined;
  try {
    for await (const part of input.model.stream({ ...input.request(), signal })) {
      switch (part.type) {
        case 'text_delta':
          text += part.delta;
          input.onTextDelta(part.delta);
          break;
        case 'reasoning_delta':
          reasoning += part.delta;
          input.onReasoningDelta(part.delta);
          break;
        case 'tool_call':
          calls.push(validCall(part.call, calls));
          break;
        case 'finish':
          usage = part.usage ?? {};
          finishReason = part.finishReason;
          break;
        default:
          throw new ModelError(`Model '${input.model.name}' sent an unknown stream part: ${JSON.stringify(part)}`);
      }
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    throw new ModelError(`Model '${input.model.name}' failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  return { text, reasoning, calls, usage, finishReason };
}

/** Results pair with calls by id, so a reply's ids must be present and unique. */
function validCall(call: ToolCallRequest, earlier: readonly ToolCallRequest[]): ToolCallRequest {
  if (!call || typeof call.id !== 'string' || call.id === '' || typeof call.name !== 'string' || typeof call.arguments !== 'string') {
    throw new ModelError(`Malformed tool call #${earlier.length + 1} from the model: ${JSON.stringify(call)}`);
  }
  if (earlier.some((c) => c.id === call.id)) {
    throw new ModelError(`The model sent tool call id '${call.id}' twice in one reply; results could not be paired with calls.`);
  }
  return call;
}

export const modelTurnActor = fromPromise<ModelReply, ModelTurnInput>(({ input, signal }) => streamModelTurn(input, signal));
