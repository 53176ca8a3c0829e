import { ApiError } from '../../http/errors.js';

/**
 * Sign-in's refusals as types: the REST routes render them as their envelope (they are ApiErrors),
 * and the provider callback picks its page by class, never by status.
 */

/** The interaction expired, was completed, or its client went away: all look the same (404). */
export class InteractionGone extends ApiError {
  constructor() {
    super(404, 'not_found', 'interaction not found');
  }
}

/** The brand has no enabled connection (nor operator default) for the provider (404). */
export class ProviderNotEnabled extends ApiError {
  constructor(label: string) {
    super(404, 'not_found', `${label} sign-in is not enabled for this brand`);
  }
}

/** The provider account is linked to another live user (409). */
export class LinkedToAnotherUser extends ApiError {
  constructor() {
    super(409, 'conflict', 'this provider account is linked to another user');
  }
}

/** The user a link was started for is gone (404). */
export class AccountGone extends ApiError {
  constructor() {
    super(404, 'not_found', 'user not found');
  }
}
