/**
 * The action-executor and mailbox part of troupe's xstate 5.33.3 Actor patches
 * (scripts/patch-xstate-actor.mjs lists them with the others). Each keeps XState's behaviour:
 *
 * - Actor scope (shared actionExecutor): one function for every actor, called as a method of
 *   the scope (`scope.actionExecutor(…)`; the microstep that swaps in its collecting executor
 *   calls the saved one with the scope as `this`), instead of a closure per actor; an action
 *   that runs at once no longer makes an `exec` closure either. Its inspection event is built
 *   only when the system is inspected, as at the five other places.
 * - Mailbox: holds its actor and calls its `_process`, instead of a function bound to it, in the
 *   constructor and in the new mailbox XState gives a stopped actor.
 */

/** The executor and mailbox patches for the step files `files`, each commented with `mark`. */
export const executorPatches = (files, mark) => [
  ...sharedActionExecutor(files.filter((f) => !usesExportedFlag(f)), mark, 'executingCustomAction'),
  ...sharedActionExecutor(files.filter(usesExportedFlag), mark, 'exports.executingCustomAction'),
  {
    name: 'Mailbox (owner instead of a bound function)',
    files,
    original: `  constructor(_process) {
    this._process = _process;
    this._active = false;
`,
    patched: `  ${mark} the actor itself, whose _process it calls: no bound function per mailbox.
  constructor(owner) {
    this._owner = owner;
    this._active = false;
`,
  },
  {
    name: 'Mailbox#flush (owner)',
    files,
    original: `      this._process(consumed.value);
`,
    patched: `      this._owner._process(consumed.value);
`,
  },
  {
    name: 'Actor (mailbox)',
    files,
    original: `    this.id = void 0;
    this.mailbox = new Mailbox(this._process.bind(this));
`,
    patched: `    this.id = void 0;
    this.mailbox = new Mailbox(this);
`,
  },
  {
    name: 'Actor#_stop (mailbox)',
    files,
    original: `    this.mailbox = new Mailbox(this._process.bind(this));
    this._processingStatus = ProcessingStatus.Stopped;
`,
    patched: `    this.mailbox = new Mailbox(this);
    this._processingStatus = ProcessingStatus.Stopped;
`,
  },
];

/** Whether a build reads XState's executing-custom-action flag as an export (the development CommonJS build). */
const usesExportedFlag = (file) => file.includes('.development.cjs.');

/**
 * The actor scope's action executor as one shared function (called as a scope method, `this` is
 * the scope; the microstep patch calls it so), for the builds in `files`, whose flag is spelled `flag`.
 * An action that runs now no longer makes an `exec` closure; a deferred one still does.
 */
function sharedActionExecutor(files, mark, flag) {
  const run = `  const saveExecutingCustomAction = ${flag};
  try {
    ${flag} = true;
    action.exec(action.info, action.params);
  } finally {
    ${flag} = saveExecutingCustomAction;
  }
`;
  return [
    {
      name: `Actor scope (shared actionExecutor, ${flag})`,
      files,
      original: `      actionExecutor: action => {
BODY      }
    };
`.replace('BODY', BODY_OF(flag)),
      patched: `      ${mark} one function for every actor (see executeActionOnScope).
      actionExecutor: executeActionOnScope
    };
`,
    },
    {
      name: `Actor scope functions (actionExecutor, ${flag})`,
      files,
      original: `/**
 * An Actor is a running process that can receive events, send events and change
`,
      patched: `${mark} an actor scope's action executor, shared by every actor (\`this\` is the scope).
function executeActionOnScope(action) {
  const actor = this.self;
  if (actor._processingStatus === ProcessingStatus.Running) {
    runActionOf(actor, action);
  } else {
    actor._deferred.push(() => runActionOf(actor, action));
  }
}
function runActionOf(actor, action) {
  if (actor._actorScope.system._inspected) actor._actorScope.system._sendInspectionEvent({
    type: '@xstate.action',
    actorRef: actor,
    action: {
      type: action.type,
      params: action.params
    }
  });
  if (!action.exec) {
    return;
  }
${run}}

/**
 * An Actor is a running process that can receive events, send events and change
`,
    },
  ];
}

/** XState's action executor body, as written in builds whose flag is spelled `flag`. */
const BODY_OF = (flag) => `        const exec = () => {
          this._actorScope.system._sendInspectionEvent({
            type: '@xstate.action',
            actorRef: this,
            action: {
              type: action.type,
              params: action.params
            }
          });
          if (!action.exec) {
            return;
          }
          const saveExecutingCustomAction = ${flag};
          try {
            ${flag} = true;
            action.exec(action.info, action.params);
          } finally {
            ${flag} = saveExecutingCustomAction;
          }
        };
        if (this._processingStatus === ProcessingStatus.Running) {
          exec();
        } else {
          this._deferred.push(exec);
        }
`;
