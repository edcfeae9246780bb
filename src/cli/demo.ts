import { z } from 'zod';
import { Agent, Runner, tool, type Message, type Model, type RunEvent, type ToolResultMessage } from '../index.js';
import { ScriptedModel, batch, call, text, type ScriptStep } from '../entry/testing.js';

/**
 * The orchestration demo on the scripted model: a triage agent hands off to a travel
 * specialist, which asks a research agent (as a tool) whose three tools run in parallel
 * (one reports progress, one fails once and is retried), then books a hotel: a
 * `parallel: false` call that needs an approval. Every call builds fresh scripted models.
 */
export function demoAgent(model?: Model): Agent {
  // With a real model every agent shares it; otherwise each gets its own script.
  const scripted = (steps: ScriptStep[]): Model => model ?? new ScriptedModel(steps);
  let flightAttempts = 0;
  const weather = tool({
    name: 'weather',
    description: 'Current weather for a city.',
    parameters: z.object({ city: z.string().describe('City name') }),
    execute: async ({ city }, ctx) => {
      ctx.onUpdate({ stage: 'asking the weather service', city });
      await sleep(city === 'Rome' ? 40 : 20);
      return { city, celsius: city === 'Rome' ? 24 : 18, sky: 'clear' };
    },
  });
  const flights = tool({
    name: 'flights',
    description: 'Search flights between two cities.',
    parameters: z.object({ from: z.string(), to: z.string() }),
    retries: 1,
    execute: async ({ from, to }) => {
      await sleep(10);
      if (++flightAttempts === 1) throw new Error('flight search timed out upstream');
      return [`${from}→${to} 08:15 €89`, `${from}→${to} 17:40 €64`];
    },
    resultRenderer: (rows) => (rows as string[]).join('\n'),
  });
  const bookHotel = tool({
    name: 'book_hotel',
    description: 'Book a hotel room. Costs money, so a person must approve it.',
    parameters: z.object({ city: z.string(), nights: z.number().int().min(1) }),
    parallel: false,
    needsApproval: true,
    execute: async ({ city, nights }) => `Booked ${nights} nights in ${city} (confirmation HX-2041).`,
  });

  const research = new Agent({
    name: 'Research',
    instructions: 'Collect facts with your tools, in parallel where you can.',
    tools: [weather, flights],
    model: scripted([
      batch(
        [
          ['weather', { city: 'Paris' }, 'call_weather_paris'],
          ['weather', { city: 'Rome' }, 'call_weather_rome'],
          ['flights', { from: 'Paris', to: 'Rome' }, 'call_flights'],
        ],
        { text: 'Checking weather in both cities and flights.' },
      ),
      text('Paris 18 °C, Rome 24 °C, both clear. Cheapest flight Paris→Rome 17:40 for €64.'),
    ]),
  });
  const specialist = new Agent({
    name: 'Travel specialist',
    instructions: 'Plan trips. Ask Research for facts, then book.',
    tools: [research.asTool({ maxTurns: 4 }), bookHotel],
    model: scripted([
      call('ask_research', { input: 'Weather in Paris and Rome this weekend, and flights Paris→Rome.' }, 'call_research', { text: 'Let me ask Research.' }),
      call('book_hotel', { city: 'Rome', nights: '2' }, 'call_book', { text: 'Rome looks warmer. Booking the hotel.' }),
      // The last reply reads the booking's result, so a denied booking is reported as not made.
      { text: '', calls: [], respond: (request) => ({ text: bookingReply(request.messages) }) },
    ]),
  });
  return new Agent({
    name: 'Triage',
    instructions: 'Send each request to the right specialist.',
    handoffs: [specialist],
    model: scripted([call('transfer_to_travel_specialist', { reason: 'trip planning' }, 'call_handoff', { text: 'A travel question.' })]),
  });
}

/** The specialist's closing line, from the booking's result in the transcript. */
export function bookingReply(messages: readonly Message[]): string {
  const booking = [...messages].reverse().find((m): m is ToolResultMessage => m.role === 'tool' && m.callId === 'call_book');
  if (booking && !booking.isError) return 'Rome is 24 °C and clear, the 17:40 flight costs €64, and your hotel is booked for 2 nights (HX-2041).';
  const reason = /approval denied for tool '[^']*'(?::\s*(.+))?/.exec(booking?.content ?? '')?.[1]?.trim();
  return `Rome is 24 °C and clear and the 17:40 flight costs €64, but the hotel was not booked: the booking was denied${reason ? ` (${reason.replace(/\.$/, '')})` : ''}.`;
}

/** Runs the demo, printing the event stream; approves the booking like a person would. */
export async function runDemo(out: (line: string) => void = console.log, model?: Model): Promise<void> {
  out(
    model
      ? `troupe demo: triage → travel specialist → research agent as a tool, on ${model.name}.\n`
      : 'troupe demo: triage → travel specialist → research agent as a tool, on the scripted model (no API key needed;\n' +
          'set TROUPE_MODEL=openai-compatible:<model> and TROUPE_BASE_URL to use a real one).\n',
  );
  const handle = Runner.stream(demoAgent(model), 'Plan a weekend in Paris or Rome and book the hotel.');
  const started = Date.now();
  let midLine = false;
  for await (const event of handle) {
    if (event.type === 'text_delta') {
      process.stdout.write(midLine ? event.delta : `${indent(event)}  ${event.agent}: ${event.delta}`);
      midLine = true;
      continue;
    }
    if (midLine) {
      process.stdout.write('\n');
      midLine = false;
    }
    if (event.type === 'approval_required') {
      out(`${stamp(started)}${indent(event)}  ? approval required for ${event.call.name}(${event.call.arguments}) — approving`);
      event.approve();
      continue;
    }
    const line = describe(event);
    if (line) out(`${stamp(started)}${indent(event)}  ${line}`);
  }
  const result = await handle.result().catch((error: Error) => error);
  if (result instanceof Error) out(`\nrun failed: ${result.message}`);
  else out(`\noutput: ${result.output}\nusage: ${JSON.stringify(result.usage)}`);
}

/** One readable line per event (text deltas are printed as they stream, elsewhere). */
export function describe(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'run_started': return `▶ run ${event.runId} started (agent ${event.agent})`;
    case 'turn_started': return `— ${event.agent}, turn ${event.turn}`;
    case 'handoff_occurred': return `⇄ handoff ${event.from} → ${event.to}`;
    case 'message_completed': return event.message.toolCalls.length ? `  model asked for ${event.message.toolCalls.length} tool call(s)` : undefined;
    case 'tool_call_started': return `  ⇢ ${event.call.id} ${event.call.name}(${event.call.arguments})`;
    case 'tool_call_progress': return `    … ${event.call.id} ${JSON.stringify(event.progress)}`;
    case 'tool_call_failed': return `  ✗ ${event.call.id} attempt ${event.attempt} failed: ${event.error.message}${event.willRetry ? ' (retrying)' : ''}`;
    case 'tool_call_completed': return `  ${event.isError ? '✗' : '✓'} ${event.call.id} → ${event.output.replace(/\n/g, ' | ')}`;
    case 'turn_ended': return undefined;
    case 'run_completed': return `■ run ${event.runId} completed after ${event.turns} turns`;
    case 'run_failed': return `■ run failed: ${event.error.message}`;
    default: return undefined;
  }
}

/** Sub-run events are indented by their depth. */
export function indent(event: RunEvent): string {
  return '  '.repeat(event.path.length - 1);
}

function stamp(start: number): string {
  return `${String(Date.now() - start).padStart(4)} ms`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
