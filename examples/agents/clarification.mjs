// @ts-check
// openai: [{"content":"```js\naskClarification('Which order number?')\n```"},{"content":"```js\nfinal('Reply with the order status', { order: '1042', status: 'shipped' })\n```"},{"content":"{\"reply\":\"Order 1042 has shipped.\"}"}]
// An agent as an event target with state. When its actor asks a question, the run parks as
// waiting_event with an `ax.clarification` continuation; an answering event that a resume
// route correlates continues the run with the original inputs.
import {
  agent,
  axOpenAICompatible,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from 'ax-mcp';

const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region target
const helper = agent('request:string -> reply:string');
const target = eventTarget('helper')
  .program(helper) // state is saved and restored per (target, identity scope, instance)
  .ai(llm)
  .input(eventInput().field('request', eventPath.data('text'))) // the answer is mapped to an input too
  .build();
const runtime = eventRuntime({
  scheduling: 'host',
  routes: [
    eventRoute('asked').types('chat.message').wake(target).build(),
    eventRoute('answered')
      .types('chat.answer')
      .correlate('ax.clarification', eventPath.data('runId'))
      .resume(target)
      .build(),
  ],
});
// #endregion target
await runtime.start();

// #region clarify
const asked = await runtime.publish({
  event: { id: 'm1', source: 'app://chat', type: 'chat.message', data: { text: 'Where is my order?' } },
});
await runtime.runDue();
const parked = await runtime.getRun(asked.deliveryIds[0] ?? '');
const output = /** @type {{ clarification?: { question: string, value: string } }} */ (parked?.output ?? {});
const clarification = output.clarification ?? { question: '', value: '' };
console.log(parked?.status, '-', clarification.question); // waiting_event - Which order number?

const answered = await runtime.publish({
  event: {
    id: 'm2',
    source: 'app://chat',
    type: 'chat.answer',
    data: { runId: clarification.value, text: 'It is order 1042' },
  },
});
await runtime.runDue();
const resumed = await runtime.getRun(answered.deliveryIds[0] ?? '');
console.log(resumed?.status, '-', JSON.stringify(resumed?.output)); // succeeded - {"reply":"Order 1042 has shipped."}
// #endregion clarify
await runtime.close();
await helper.close();
