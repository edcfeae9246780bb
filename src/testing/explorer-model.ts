import type { Model, ModelRequest, ModelStreamPart } from '../models/model.js';
import { ScriptedModel } from '../models/scripted.js';
import type { ScriptStep } from '../models/script-steps.js';
import { exampleValue } from './example-args.js';
import { overBudgetUsage, type PathBudgets } from './explorer-budget.js';
import { abortedBy, type PathDriver } from './path-driver.js';

/** Fixed usage for every explored reply: budgets count requests, not made-up token numbers. */
const USAGE = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

/**
 * The model every agent of an explored system gets. An agent with a script answers from it;
 * any other agent's request is a choice point: a text reply, or one call of each tool the
 * request offers (while the run has made fewer than `maxCallsPerRun` calls), a model error
 * (with `modelFailures`), a reply over the run's own token budget (when it has one), or a cancel.
 */
export class ExplorerModel implements Model {
  readonly name = 'exploration';
  private readonly scripted = new Map<string, ScriptedModel>();
  private callIds = 0;

  constructor(
    private readonly driver: PathDriver,
    private readonly agent: string,
    private readonly script: readonly ScriptStep[] | undefined,
    private readonly maxCallsPerRun: number,
    private readonly args: Readonly<Record<string, unknown>>,
    private readonly failures: boolean,
    private readonly budgets: PathBudgets,
  ) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const runId = request.runId ?? '(no run id)';
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const at = `${request.agent} reply ${turn}`;
    const driver = this.driver;
    driver.log.push({ kind: 'model', runId, agent: request.agent });
    // A cancel was chosen and is on its way: this request is in flight when it arrives.
    if (driver.cancelling) {
      await abortedBy(request.signal);
      return;
    }
    if (this.script) {
      if (driver.choose(at, driver.withCancel(['scripted'])) === 1) {
        driver.cancel(at);
        await abortedBy(request.signal);
      }
      yield* this.scriptFor(request.agent).stream(request);
      return;
    }
    const tools = driver.callsMade(runId) < this.maxCallsPerRun ? request.tools.map((t) => t.name) : [];
    const overrun = overBudgetUsage(this.budgets.of(runId));
    const options = driver.withCancel(['text', ...tools.map((name) => `call ${name}`), ...(this.failures ? ['model error'] : []), ...(overrun ? ['over budget'] : [])]);
    const took = driver.choose(at, options);
    if (options[took] === 'cancel') {
      driver.cancel(at);
      await abortedBy(request.signal);
    }
    if (options[took] === 'model error') throw new Error(`${request.agent}'s model failed (exploration)`);
    if (options[took] === 'over budget') {
      // A text reply that spent one token more than the run's budget allows: the runtime stops the run.
      yield { type: 'text_delta', delta: `${request.agent} answers at length.` };
      yield { type: 'finish', usage: overrun, finishReason: 'stop' };
      return;
    }
    if (took === 0) {
      yield { type: 'text_delta', delta: `${request.agent} answers.` };
      yield { type: 'finish', usage: USAGE, finishReason: 'stop' };
      return;
    }
    const name = tools[took - 1]!;
    driver.countCall(runId);
    const schema = request.tools.find((t) => t.name === name)!.parameters;
    const args = name in this.args ? this.args[name] : exampleValue(schema);
    yield { type: 'tool_call', call: { id: `${this.agent.replace(/\W+/g, '_')}_call_${++this.callIds}`, name, arguments: JSON.stringify(args) } };
    yield { type: 'finish', usage: USAGE, finishReason: 'tool-calls' };
  }

  private scriptFor(agent: string): ScriptedModel {
    let model = this.scripted.get(agent);
    if (!model) this.scripted.set(agent, (model = new ScriptedModel(this.script, { record: false })));
    return model;
  }
}
