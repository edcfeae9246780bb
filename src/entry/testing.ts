/**
 * `troupe/testing`: test doubles. A separate entry so that importing `troupe` never loads
 * them into production code.
 */
export { ScriptedModel, text, call, batch, type ScriptStep, type RecordedRequest } from '../models/scripted.js';
