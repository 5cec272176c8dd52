import { create } from 'zustand';
import { protocolApi, type SampleSizeRequest, type SampleSizeResponse } from '../api';
import { useProtocolAgentStore } from './protocol-agent';

/** The sample-size calculator page: the last calculation, and sending its result to the card that opened it. */
interface SampleSizeCalculatorState {
  isCalculating: boolean;
  /** The request the result was computed from; "Use in protocol" sends it as the inputs. */
  request?: SampleSizeRequest;
  result?: SampleSizeResponse;
  error?: unknown;
  isApplying: boolean;
  applyError?: unknown;
  calculate(request: SampleSizeRequest): Promise<void>;
  /** Sends a result to the action card that opened the calculator; true when the protocol recorded it. */
  apply(conversationId: string, cardId: string, result: Record<string, unknown>): Promise<boolean>;
  reset(): void;
}

const INITIAL = { isCalculating: false, request: undefined, result: undefined, error: undefined, isApplying: false, applyError: undefined };

export const useSampleSizeCalculatorStore = create<SampleSizeCalculatorState>()((set) => {
  /** Bumped by every calculation and reset, so an answer that arrives after the page moved on is dropped. */
  let latest = 0;
  return {
    ...INITIAL,

    async calculate(request) {
      const mine = ++latest;
      set({ ...INITIAL, isCalculating: true, request });
      try {
        const result = await protocolApi.sampleSize(request);
        if (mine === latest) set({ isCalculating: false, result });
      } catch (error) {
        if (mine === latest) set({ isCalculating: false, error });
      }
    },

    async apply(conversationId, cardId, result) {
      set({ isApplying: true, applyError: undefined });
      try {
        const { context } = await protocolApi.actionCallback(conversationId, cardId, result);
        useProtocolAgentStore.getState().applyContext(context);
        set({ isApplying: false });
        return true;
      } catch (applyError) {
        set({ isApplying: false, applyError });
        return false;
      }
    },

    reset() {
      latest += 1;
      set({ ...INITIAL });
    },
  };
});
