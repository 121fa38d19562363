// zulip-js (MIT) ships no types; the tests use only this much of it. Every call answers the
// server's JSON body, errors included (zulip-js throws only on a body that is not JSON).
declare module 'zulip-js' {
  type Params = Record<string, unknown>;
  type Reply = Promise<Record<string, unknown>>;
  interface ZulipClient {
    config: { apiURL: string };
    callEndpoint(endpoint: string, method?: string, params?: Params): Reply;
    users: {
      retrieve(params?: Params): Reply;
      me: {
        getProfile(): Reply;
        subscriptions: { add(params: Params): Reply; remove(params: Params): Reply };
      };
    };
    streams: {
      retrieve(params?: Params): Reply;
      getStreamId(name: string | Params): Reply;
      subscriptions: { retrieve(params?: Params): Reply };
      topics: { retrieve(params: { stream_id: number }): Reply };
      deleteById(params: { stream_id: number }): Reply;
    };
    messages: {
      retrieve(params: Params): Reply;
      send(params: Params): Reply;
      render(params: string | Params): Reply;
      update(params: Params & { message_id: number }): Reply;
      getById(params: { message_id: number }): Reply;
      deleteById(params: { message_id: number }): Reply;
      deleteReactionById(params: Params & { message_id: number }): Reply;
      flags: { add(params: Params): Reply; remove(params: Params): Reply };
    };
    reactions: { add(params: Params & { message_id: number }): Reply; remove(params: Params & { message_id: number }): Reply };
    queues: { register(params?: Params): Reply; deregister(params: Params): Reply };
    events: { retrieve(params: Params): Reply };
    emojis: { retrieve(params?: Params): Reply };
    server: { settings(params?: Params): Reply };
  }
  export default function zulip(config: { username: string; apiKey?: string; password?: string; realm: string }): Promise<ZulipClient>;
}
