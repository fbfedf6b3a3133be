// @ts-check
// openai: [{"content":"Hello from the model."},{"content":"{\"answer\":\"Reindexing rebuilds the search index of one warehouse.\"}"}]
// The AI service: axOpenAICompatible speaks OpenAI chat completions (OpenAI, a gateway, or a
// local server such as Ollama, vLLM or LM Studio). Options are checked before anything is
// sent; a program streams its outputs field by field with streamingForward.
import { AxAIOptionsError, ax, axOpenAICompatible } from 'ax-mcp';

// #region service
try {
  // The default OpenAI URL without a key could only ever answer 401: refused at construction.
  axOpenAICompatible({ model: 'gpt-4.1-mini', baseURL: 'https://api.openai.com/v1', apiKey: '' });
} catch (error) {
  if (error instanceof AxAIOptionsError) console.log(error.code, error.path); // invalid_options apiKey
}

const llm = axOpenAICompatible({
  model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  // apiKey: OPENAI_API_KEY, baseURL: OPENAI_BASE_URL (else https://api.openai.com/v1)
  timeoutMs: 60_000,
  maxRetries: 2, // 429, 5xx and network errors, honouring Retry-After
});
const response = await llm.chat({ messages: [{ role: 'user', content: 'Say hello.' }] });
console.log(response.message.content, `(${response.finishReason})`);
// #endregion service

// #region streaming
const explain = ax('question:string -> answer:string');
for await (const chunk of explain.streamingForward(llm, { question: 'What does a reindex do?' })) {
  if (chunk.channel === 'output' && chunk.type === 'delta') process.stdout.write(chunk.delta.answer ?? '');
  if (chunk.channel === 'output' && chunk.type === 'final') console.log(`\nfinal: ${chunk.output.answer}`);
}
// #endregion streaming
