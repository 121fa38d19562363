/**
 * The one place the messages service calls the renderer (@zc/markdown). Everything the
 * renderer needs comes in a RenderContext of preloaded lookups (actions/render-context.ts
 * builds it from cached read models), so rendering does no I/O.
 */
import { render, renderTopicLinks, RENDERER_VERSION, type Linkifier, type RenderContext, type RenderResult } from '@zc/markdown';

export { RENDERER_VERSION };
export type { Linkifier, RenderContext };
export type Rendered = RenderResult;

export interface TopicLink {
  text: string;
  url: string;
}

/** Renders a message's Markdown source; the HTML contains no markup the user wrote. Never throws. */
export function renderContent(content: string, ctx: RenderContext): Rendered {
  return render(content, ctx);
}

/** A topic's `topic_links` (spec 2.2): the realm's linkifiers applied in the realm's order. */
export function topicLinksOf(topic: string, linkifiers: readonly Linkifier[]): TopicLink[] {
  if (topic === '') return [];
  return renderTopicLinks(topic, linkifiers);
}
