/** The Node adapter of the UCP webhook source: the public face of `src/node/ucp`. */
export {
  type AxUCPWebhookHandlerOptions,
  type AxUCPWebhookListener,
  type AxUCPWebhookListenerOptions,
  type AxUCPWebhookReceiver,
  type AxUCPWebhookRequestHandler,
  axUCPWebhookHandler,
  axUCPWebhookListener,
} from './webhook-listener.js';
