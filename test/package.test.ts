import { execFileSync } from 'node:child_process';
// dist/ is built by `npm install` / `npm ci` (the prepare script).
import { describe, expect, it } from 'vitest';

describe('package entry', () => {
  it('exports the public API from dist through the package name under plain node', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('troupe'); console.log(Object.keys(m).sort().join(','))"], { encoding: 'utf8' });
    expect(out.trim()).toBe(
      'Agent,AiSdkModel,BudgetExceeded,CHECKPOINT_SCHEMA_VERSION,InspectionFeed,InvalidToolArguments,MaxTurnsExceeded,McpConnectionError,MemoryCheckpointStore,MemorySession,ModelError,ProviderError,RunCancelled,RunHandle,Runner,SESSION_SCHEMA_VERSION,ScriptExhausted,ScriptedModel,SqliteCheckpointStore,SqliteSession,ToolError,ToolTimeout,TroupeError,UserError,agentAsTool,aiSdkModel,askHuman,batch,call,checkJsonSchema,createServer,decideWorkspacePolicy,defaultParallelToolCalls,exportRun,getRunMachine,handoff,mcp,modelFromEnv,parseRunExport,rawTool,startDemoServer,text,tool,toolResult,workspaceTools',
    );
  });

  it('runs the demo under plain node (XState production build) to run_completed', () => {
    const out = execFileSync(process.execPath, ['dist/cli/main.js', 'demo'], { encoding: 'utf8' });
    expect(out).toContain('⇄ handoff Triage → Travel specialist');
    // The sub-run of call 0 in the specialist's turn 2 (sub-run ids are <parent>/<turn>.<index>).
    expect(out).toMatch(/▶ run run_[\w-]+\/2\.0 started \(agent Research\)/);
    expect(out).toContain('✗ call_flights attempt 1 failed: flight search timed out upstream (retrying)');
    expect(out).toContain('? approval required for book_hotel({"city":"Rome","nights":"2"}) — approving');
    expect(out).toMatch(/■ run run_[\w-]+ completed after 4 turns/);
    expect(out).toContain('output: Rome is 24 °C and clear');
  });
});
