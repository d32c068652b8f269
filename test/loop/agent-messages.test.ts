// The agent workflow's message and failure type names are in recorded histories and in deployed
// clients: this pins every string, so a rename fails here instead of in production.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as messages from '../../common/agent-messages';

test('the agent workflow answers to the same message names as before', () => {
  assert.equal(messages.stateQuery.name, 'state');
  assert.equal(messages.modelViewQuery.name, 'model_view');
  assert.equal(messages.approvalUpdate.name, 'approval');
  assert.equal(messages.extendUpdate.name, 'extend');
  assert.equal(messages.sayUpdate.name, 'say');
  assert.equal(messages.attemptChargedSignal.name, 'llm_attempt_charged');
  assert.equal(messages.ATTEMPT_CHARGED_SIGNAL, 'llm_attempt_charged');
});

test('failure types keep their spelling', () => {
  assert.deepEqual(
    {
      INVALID_INPUT: messages.INVALID_INPUT,
      INVALID_TOP_UP: messages.INVALID_TOP_UP,
      INVALID_APPROVAL: messages.INVALID_APPROVAL,
      INVALID_MESSAGE: messages.INVALID_MESSAGE,
      LLM_TIMEOUT: messages.LLM_TIMEOUT,
      LLM_RETRYABLE: messages.LLM_RETRYABLE,
      LLM_REJECTED: messages.LLM_REJECTED,
      LLM_BUDGET: messages.LLM_BUDGET,
      UNPRICED_MODEL: messages.UNPRICED_MODEL,
      TOOL_BAD_ARGS: messages.TOOL_BAD_ARGS,
      MCP_CONFIG: messages.MCP_CONFIG,
      MCP_UNAVAILABLE: messages.MCP_UNAVAILABLE,
      MCP_TOOL_ERROR: messages.MCP_TOOL_ERROR,
      MCP_NO_LOOKUP: messages.MCP_NO_LOOKUP,
      ACTIVITY_NOT_FOUND: messages.ACTIVITY_NOT_FOUND,
    },
    {
      INVALID_INPUT: 'InvalidAgentInput',
      INVALID_TOP_UP: 'InvalidTopUp',
      INVALID_APPROVAL: 'InvalidApproval',
      INVALID_MESSAGE: 'InvalidMessage',
      LLM_TIMEOUT: 'LlmTimeout',
      LLM_RETRYABLE: 'LlmRetryable',
      LLM_REJECTED: 'LlmRejected',
      LLM_BUDGET: 'LlmBudgetExhausted',
      UNPRICED_MODEL: 'UnpricedModel',
      TOOL_BAD_ARGS: 'ToolBadArgs',
      MCP_CONFIG: 'McpConfig',
      MCP_UNAVAILABLE: 'McpUnavailable',
      MCP_TOOL_ERROR: 'McpToolError',
      MCP_NO_LOOKUP: 'McpNoLookup',
      ACTIVITY_NOT_FOUND: 'NotFound',
    },
  );
});
